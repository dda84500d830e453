package io.github.distlock.store;

import java.time.Instant;

import io.github.distlock.LockSnapshot;
import org.jspecify.annotations.Nullable;

/**
 * What an entry's value says about its writer, the same in every store: three lines, the owner
 * identity, the thread name and the wall-clock time the entry was written (epoch milliseconds),
 * so that the store's own tools ({@code etcdctl}, {@code redis-cli}) and the actuator endpoint can
 * tell who holds and who waits since when. Owner identities cannot contain line breaks
 * ({@link RegistrySettings#checkOwnerIdentity}); line breaks ({@code \n}, {@code \r}) in thread names are
 * replaced by spaces.
 *
 * @param owner the registry's owner identity
 * @param thread the name of the acquiring thread, or {@code null} if the value does not record it
 * @param queuedAt when the entry was written, or {@code null} if the value does not record it
 */
public record EntryValue(String owner, @Nullable String thread, @Nullable Instant queuedAt) {

    /**
     * @param owner the owner identity
     * @param thread the acquiring thread's name
     * @param epochMillis when the entry is written
     * @return the value
     */
    public static String encode(String owner, String thread, long epochMillis) {
        return owner + '\n' + thread.replace('\n', ' ').replace('\r', ' ') + '\n' + epochMillis;
    }

    /**
     * Reads a value; a value written by something else is shown whole as the owner.
     * @param text the value
     * @return what it says
     */
    public static EntryValue decode(String text) {
        int ownerEnd = text.indexOf('\n');
        int threadEnd = text.lastIndexOf('\n');
        if (ownerEnd < 0 || threadEnd == ownerEnd) {
            return new EntryValue(text, null, null);
        }
        Instant queuedAt;
        try {
            queuedAt = Instant.ofEpochMilli(Long.parseLong(text.substring(threadEnd + 1)));
        }
        catch (NumberFormatException ex) {
            return new EntryValue(text, null, null);
        }
        return new EntryValue(text.substring(0, ownerEnd), text.substring(ownerEnd + 1, threadEnd), queuedAt);
    }

    /** @return {@code owner/thread}: how errors and {@code FencedLock.getHolder()} name the writer */
    public String describe() {
        return LockSnapshot.Entry.describe(this.owner, this.thread);
    }
}
