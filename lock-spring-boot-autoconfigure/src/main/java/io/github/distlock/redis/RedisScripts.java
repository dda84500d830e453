package io.github.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Lua scripts that keep a lock's queue. Each runs atomically on the primary that owns the
 * lock's slot, touches only names of that one lock (they share a hash tag), and is idempotent, so
 * a client that resends a command after a reconnect changes nothing twice.
 *
 * <p>Invariants the scripts keep together: an entry id is in a queue at most once, with the fence
 * drawn when it was first added, greater than the counter's last value and than every fence in the
 * queue, and not below the server's clock in microseconds (so queue order is fence order); the
 * holder is the oldest entry whose liveness key exists; an entry whose liveness key is gone is
 * removed when it reaches the head (so a dead waiter never stalls the queue), and {@code -} and its
 * id are published (so a process whose entry was deleted behind its back learns it when another
 * entry is about to take the key); whenever a script changes who holds, it publishes the new
 * holder's id, and then {@code +} and the id if other entries are queued behind it; whenever a
 * script queues an entry behind the holder, it publishes {@code +} and the holder's id (so a holder
 * learns of every entry behind it from its answer or from a message, see
 * {@link RedisEntry#whenQueuedBehind}); the queue and the counter live at least as long as the
 * longest-lived entry that was added or renewed.
 */
final class RedisScripts {

    /**
     * Shared by the scripts that change the queue: drops dead entries at the head and returns the
     * live head's id and liveness-key PTTL (-1 for a key without expiry, written by hand). Each
     * dropped entry is published as {@code -} and its id: an entry whose liveness key vanished while
     * its process still counts on it (deleted by hand, lost in a failover) is the one case where its
     * owner cannot know by itself before its next renewal.
     */
    private static final String LIVE_HEAD = """
            local function liveHead(queue, prefix, channel)
              local dropped = false
              while true do
                local first = redis.call('ZRANGE', queue, 0, 0)
                if #first == 0 then return nil, 0, dropped end
                local pttl = redis.call('PTTL', prefix .. first[1])
                if pttl ~= -2 then return first[1], pttl, dropped end
                redis.call('ZREM', queue, first[1])
                redis.call('PUBLISH', channel, '-' .. first[1])
                dropped = true
              end
            end
            local function behind(queue)
              if redis.call('ZCARD', queue) > 1 then return 1 end
              return 0
            end
            local function tellHead(channel, queue, head)
              redis.call('PUBLISH', channel, head)
              if behind(queue) == 1 then redis.call('PUBLISH', channel, '+' .. head) end
            end
            local function outlive(name, ttl)
              local left = redis.call('PTTL', name)
              if left ~= -2 and left < ttl then redis.call('PEXPIRE', name, ttl) end
            end
            """;

    /**
     * KEYS: queue, counter, own entry key. ARGV: entry id, TTL ms, entry value, entry prefix, channel.
     * Returns {fence, 1, 1 if entries are queued behind else 0} when the entry holds,
     * {fence, 0, head's value, head's PTTL} when it waits, {-1} if the entry is gone (written
     * before and expired, or removed).
     */
    static final RedisScript ENQUEUE = new RedisScript("enqueue", LIVE_HEAD + """
            local queue, counter, own = KEYS[1], KEYS[2], KEYS[3]
            local id, ttl, prefix = ARGV[1], tonumber(ARGV[2]), ARGV[4]
            local fence = redis.call('ZSCORE', queue, id)
            if fence then
              if redis.call('EXISTS', own) == 0 then return {-1} end
              fence = tonumber(fence)
            else
              -- Removed already: this is a write resent after a reconnect, behind the removal its
              -- caller sent when it gave up; writing it again would leave an entry nobody owns.
              if redis.call('EXISTS', own .. ':r') == 1 then return {-1} end
              -- Never below the server's clock in microseconds: a counter that expired, was lost in a
              -- restart, or lags on a promoted replica still gives fences above those issued before.
              local now = redis.call('TIME')
              local clock = tonumber(now[1]) * 1000000 + tonumber(now[2])
              fence = redis.call('INCR', counter)
              -- Behind every queued entry too, so the queue's order is the fence order even if the
              -- counter expired (a registry with a shorter TTL) and the clock stepped back.
              local raised = false
              local last = redis.call('ZRANGE', queue, -1, -1, 'WITHSCORES')
              if #last == 2 and fence <= tonumber(last[2]) then
                fence = tonumber(last[2]) + 1
                raised = true
              end
              if fence < clock then
                fence = clock
                raised = true
              end
              if raised then
                redis.call('SET', counter, fence, 'PX', ttl)
              else
                outlive(counter, ttl)
              end
              redis.call('SET', own, ARGV[3], 'PX', ttl)
              if redis.call('ZADD', queue, fence, id) == 1 and redis.call('ZCARD', queue) == 1 then
                -- A new queue: nothing in it lives longer than this entry.
                redis.call('PEXPIRE', queue, ttl)
                return {fence, 1, 0}
              end
            end
            outlive(queue, ttl)
            local head, pttl, dropped = liveHead(queue, prefix, ARGV[5])
            if head == id then return {fence, 1, behind(queue)} end
            if dropped then
              tellHead(ARGV[5], queue, head)
            else
              redis.call('PUBLISH', ARGV[5], '+' .. head)
            end
            return {fence, 0, redis.call('GET', prefix .. head) or '', pttl}
            """);

    /**
     * KEYS: queue, own entry key. ARGV: entry id, entry prefix, channel.
     * Returns {0} if the entry is gone, {1, 1 if entries are queued behind else 0} if it holds,
     * {2, head's value, head's PTTL} if it waits.
     */
    static final RedisScript CHECK = new RedisScript("check", LIVE_HEAD + """
            local queue, own = KEYS[1], KEYS[2]
            local id, prefix = ARGV[1], ARGV[2]
            if not redis.call('ZSCORE', queue, id) then return {0} end
            if redis.call('EXISTS', own) == 0 then
              redis.call('ZREM', queue, id)
              return {0}
            end
            local head, pttl, dropped = liveHead(queue, prefix, ARGV[3])
            if head == id then return {1, behind(queue)} end
            if dropped then tellHead(ARGV[3], queue, head) end
            return {2, redis.call('GET', prefix .. head) or '', pttl}
            """);

    /**
     * KEYS: queue, own entry key. ARGV: entry id, entry prefix, channel, marker lifetime ms.
     * Removes the entry and hands the lock to the next live entry. Returns 1 if the entry was
     * live and queued (a release), 0 if it was already gone. A removal leaves a marker
     * ({@code <entry key>:r}) for {@code ARGV[4]} milliseconds (the longer of the TTL and twice the
     * request timeout, while a resend may come), so that a resent removal answers 1 again instead
     * of reporting a release as a loss, and a resent {@link #ENQUEUE} of the entry does not write it again.
     */
    static final RedisScript REMOVE = new RedisScript("remove", LIVE_HEAD + """
            local queue, own = KEYS[1], KEYS[2]
            local id, prefix = ARGV[1], ARGV[2]
            local removedBefore = own .. ':r'
            -- Removed before (this is a resend): still removes whatever is there, and counts as a release again.
            local resent = redis.call('EXISTS', removedBefore) == 1
            local live = redis.call('DEL', own)
            local before = redis.call('ZRANGE', queue, 0, 0)[1]
            local queued = redis.call('ZREM', queue, id)
            if queued == 1 and before == id or before and redis.call('EXISTS', prefix .. before) == 0 then
              local head = liveHead(queue, prefix, ARGV[3])
              if head and head ~= before then tellHead(ARGV[3], queue, head) end
            end
            if resent then return 1 end
            if live == 1 and queued == 1 then
              redis.call('SET', removedBefore, '1', 'PX', ARGV[4])
              return 1
            end
            return 0
            """);

    /**
     * KEYS: own entry key, queue, counter. ARGV: entry id, TTL ms.
     * Extends a queued entry's life by the TTL. Returns 1, or 0 if the entry is gone.
     */
    static final RedisScript RENEW = new RedisScript("renew", LIVE_HEAD + """
            local own, queue, counter = KEYS[1], KEYS[2], KEYS[3]
            local ttl = tonumber(ARGV[2])
            if not redis.call('ZSCORE', queue, ARGV[1]) then
              redis.call('DEL', own)
              return 0
            end
            if redis.call('PEXPIRE', own, ttl) == 0 then return 0 end
            outlive(queue, ttl)
            outlive(counter, ttl)
            return 1
            """);

    /**
     * KEYS: queue. ARGV: entry prefix, at most this many live entries.
     * Returns the live entries oldest first, four values each: id, fence, value, liveness PTTL.
     * Changes nothing.
     */
    static final RedisScript READ = new RedisScript("read", """
            local queue, prefix, max = KEYS[1], ARGV[1], tonumber(ARGV[2])
            local out, found, from = {}, 0, 0
            while found < max do
              local page = redis.call('ZRANGE', queue, from, from + 99, 'WITHSCORES')
              if #page == 0 then break end
              for i = 1, #page, 2 do
                local value = redis.call('GET', prefix .. page[i])
                if value and found < max then
                  local pttl = redis.call('PTTL', prefix .. page[i])
                  out[#out + 1] = page[i]
                  out[#out + 1] = page[i + 1]
                  out[#out + 1] = value
                  out[#out + 1] = pttl
                  found = found + 1
                end
              end
              from = from + 100
            end
            return out
            """);

    private RedisScripts() {
    }

    /** A script with its SHA-1, run by {@code EVALSHA} and loaded again after a restart emptied Redis's script cache. */
    record RedisScript(String name, String source, String sha) {

        RedisScript(String name, String source) {
            this(name, source, sha1(source));
        }

        private static String sha1(String source) {
            try {
                byte[] digest = MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8));
                return HexFormat.of().formatHex(digest);
            }
            catch (NoSuchAlgorithmException ex) {
                throw new IllegalStateException("Every Java platform has SHA-1", ex);
            }
        }
    }
}
