package io.github.distlock.nemesis;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.distlock.FencedLock;
import io.github.distlock.LocalHandoff;
import io.github.distlock.LockAcquisitionException;
import io.github.distlock.LockContext;
import io.github.distlock.LockLostException;
import io.github.distlock.LockRegistry;
import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.aop.DistributedLockAdvisor;
import io.github.distlock.aop.DistributedLockInterceptor;
import io.github.distlock.aop.LockOperationSource;
import io.github.distlock.core.CoreLockRegistry;
import io.github.distlock.nemesis.FencedRegister.Answer;
import io.github.distlock.nemesis.HistoryEvent.Call;
import io.github.distlock.nemesis.HistoryEvent.Failure;
import io.github.distlock.nemesis.HistoryEvent.Grant;
import io.github.distlock.nemesis.HistoryEvent.LossReport;
import io.github.distlock.nemesis.HistoryEvent.Refusal;
import io.github.distlock.nemesis.HistoryEvent.RegisterWrite;
import io.github.distlock.nemesis.HistoryEvent.Release;
import io.github.distlock.nemesis.HistoryEvent.Request;
import io.github.distlock.nemesis.HistoryEvent.Unlocking;
import io.github.distlock.testsupport.TestStore;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.core.env.StandardEnvironment;

/**
 * One worker JVM of a nemesis run: several threads contend for a hot key and a few cold ones
 * through one registry, each hold writing to the {@link FencedRegister} with its fence, and every
 * call and outcome recorded in the worker's own history file ({@code <id>.history}) as
 * {@link HistoryEvent} describes.
 *
 * <p>Arguments are {@code --name value} pairs, see {@link Settings}. The worker prints
 * {@value #READY} once its registry has a session and is warmed up, starts contending on a
 * {@value #GO} line on stdin, and on a {@value #STOP} line on stdin (or at the end
 * of stdin, when the runner is gone) lets every thread finish the call it is in, closes the
 * registry (which deletes its entries and revokes its lease) and exits after printing
 * {@value #STOPPED}; exit status 1 if a thread did not finish within {@link #STOP_TIMEOUT} or an
 * unexpected exception happened (both also on stderr).
 *
 * <p>What a thread does, each choice from its own seeded {@link Random}: picks the hot key (60%)
 * or a cold one, fair or unfair; calls {@code lock()}, {@code lockInterruptibly()},
 * {@code tryLock()} or {@code tryLock(timeout)}, the interruptible ones sometimes interrupted by
 * a timer thread while they wait; on a grant writes the register, sleeps a little, sometimes takes
 * the key again on the same thread (reentrancy, through another lock object) and writes again,
 * then unlocks. One call in seven goes through {@code @DistributedLock} instead: a method of
 * {@link LockedWork} on a Spring AOP proxy with the starter's interceptor, which writes the
 * register with {@link LockContext#currentFence()}.
 */
public final class NemesisWorker {

    /** Printed once the worker contends. */
    public static final String READY = "READY";

    /** The command that starts the contention, after {@value #READY}. */
    public static final String GO = "GO";

    /** The command that ends the run. */
    public static final String STOP = "STOP";

    /** Printed last, before a clean exit. */
    public static final String STOPPED = "STOPPED";

    /** How long the threads get to finish their call once told to stop: a healthy store grants far sooner. */
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(90);

    private final Settings settings;

    private final CoreLockRegistry<?> registry;

    private final HistoryWriter history;

    private final ScheduledExecutorService interrupter = Executors.newSingleThreadScheduledExecutor((task) -> {
        Thread thread = new Thread(task, "interrupter");
        thread.setDaemon(true);
        return thread;
    });

    private final AtomicLong operations = new AtomicLong();

    /** The annotated methods, on a proxy with the starter's {@code @DistributedLock} interceptor. */
    private final LockedWork locked;

    private final AtomicInteger unexpected = new AtomicInteger();

    private volatile boolean stopping;

    private NemesisWorker(Settings settings, CoreLockRegistry<?> registry, HistoryWriter history) {
        this.settings = settings;
        this.registry = registry;
        this.history = history;
        this.locked = lockedWork(registry);
    }

    /**
     * The proxy that {@code @DistributedLock} gets in an application, built by hand: the same
     * operation source, interceptor and advisor as the starter's auto-configuration registers,
     * without an application context around them.
     */
    private static LockedWork lockedWork(LockRegistry registry) {
        DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
        beans.registerSingleton("lockRegistry", registry);
        LockOperationSource operations = new LockOperationSource(new StandardEnvironment(), Duration.ofSeconds(30));
        DistributedLockInterceptor interceptor = new DistributedLockInterceptor(operations,
                beans.getBeanProvider(LockRegistry.class), beans, (event) -> {
                });
        ProxyFactory proxy = new ProxyFactory(new LockedWork() {
        });
        proxy.addInterface(LockedWork.class);
        proxy.addAdvisor(new DistributedLockAdvisor(operations, interceptor));
        return (LockedWork) proxy.getProxy(NemesisWorker.class.getClassLoader());
    }

    public static void main(String[] args) throws Exception {
        Settings settings = Settings.parse(args);
        TestStore store = TestStore.open(settings.store());
        LocalHandoff handoff = settings.handoff() ? new LocalHandoff(Duration.ofMillis(20), Duration.ofMillis(50))
                : LocalHandoff.DISABLED;
        CoreLockRegistry<?> registry = store.registry(settings.namespace(), settings.ttl(), settings.id(), handoff);
        HistoryWriter history = HistoryWriter.open(settings.historyDir().resolve(settings.id() + ".history"));
        NemesisWorker worker = new NemesisWorker(settings, registry, history);
        registry.addLossListener((loss) -> history.record(new LossReport(System.nanoTime(), settings.id(), loss.key(),
                loss.firstFence(), loss.lastFence(), loss.holds(),
                (loss.unlocked() ? "unlocked before: " : "") + loss.reason())));
        int status = worker.run();
        // Closes the registry (its entries deleted, its session ended), then the client.
        store.close();
        history.close();
        System.out.println(STOPPED + " " + settings.id() + " operations=" + worker.operations.get() + " unexpected="
                + worker.unexpected.get());
        System.out.flush();
        System.exit(status);
    }

    private int run() throws IOException, InterruptedException {
        warmUp();
        System.out.println(READY + " " + this.settings.id());
        System.out.flush();
        BufferedReader commands = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line = commands.readLine();
        List<Thread> threads = new ArrayList<>();
        if (line != null && line.trim().equals(GO)) {
            for (int t = 0; t < this.settings.threads(); t++) {
                int index = t;
                Thread thread = new Thread(() -> contend(index), "t" + t);
                threads.add(thread);
                thread.start();
            }
            while ((line = commands.readLine()) != null && !line.trim().equals(STOP)) {
                System.err.println("unknown command: " + line);
            }
        }
        this.stopping = true;
        long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
        int status = 0;
        for (Thread thread : threads) {
            thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
            if (thread.isAlive()) {
                System.err.println("HUNG: " + this.settings.id() + "/" + thread.getName() + " still in its call after "
                        + STOP_TIMEOUT + ":");
                Arrays.stream(thread.getStackTrace()).forEach((frame) -> System.err.println("\tat " + frame));
                status = 1;
            }
        }
        return (this.unexpected.get() > 0) ? 1 : status;
    }

    /**
     * Before anything is recorded: starts the session and takes a private key of each thread a few
     * times, unrecorded. A cold JVM's first acquisitions load classes, connect and grant the session
     * lease, for a second or more on a loaded machine; that is no waiting in the queue (G2 orders
     * waiters by when they started waiting there), and the fairness rule would read it as such.
     */
    private void warmUp() throws InterruptedException {
        try {
            this.registry.connect().get(30, TimeUnit.SECONDS);
        }
        catch (Exception ex) {
            System.err.println("no session before contending (a fault may be on): " + ex);
        }
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < this.settings.threads(); t++) {
            String key = "warm-up-" + this.settings.id() + "-" + t;
            Thread thread = new Thread(() -> {
                Runnable body = LockContext::currentFence;
                for (int i = 0; i < 20; i++) {
                    FencedLock lock = this.registry.obtain(key, i % 2 == 0);
                    try {
                        if (lock.tryLock(2, TimeUnit.SECONDS)) {
                            lock.getFence();
                            lock.unlock();
                        }
                        // The first annotated calls parse the key expression and load the interceptor's classes.
                        switch (i % 3) {
                            case 0 -> this.locked.unfair(key, body);
                            case 1 -> this.locked.fair(key, body);
                            default -> this.locked.once(key, body);
                        }
                    }
                    catch (InterruptedException | RuntimeException ex) {
                        // Faults may be on while a replacement warms up: only the warming matters here.
                    }
                }
            }, "warm-up-" + t);
            threads.add(thread);
            thread.start();
        }
        for (Thread thread : threads) {
            thread.join();
        }
    }

    private void contend(int index) {
        Random random = new Random(this.settings.seed() * 1_000_003L + this.settings.id().hashCode() * 31L + index);
        String thread = Thread.currentThread().getName();
        try (FencedRegister.Client register = FencedRegister.Client.connect(this.settings.register())) {
            while (!this.stopping) {
                operation(random, thread, register);
                if (random.nextInt(4) == 0) {
                    Thread.sleep(random.nextInt(10));
                }
            }
        }
        catch (Exception ex) {
            // Only the register failing gets here (the runner is gone): the history would have a gap.
            this.unexpected.incrementAndGet();
            System.err.println("thread " + thread + " stopped: " + ex);
            ex.printStackTrace();
        }
    }

    private void operation(Random random, String thread, FencedRegister.Client register)
            throws IOException, InterruptedException {
        List<String> keys = this.settings.keys();
        String key = (random.nextInt(100) < 60 || keys.size() == 1) ? keys.get(0)
                : keys.get(1 + random.nextInt(keys.size() - 1));
        if (random.nextInt(7) == 0) {
            annotated(random, thread, register, key);
            return;
        }
        boolean fair = random.nextBoolean();
        FencedLock lock = this.registry.obtain(key, fair);
        int dice = random.nextInt(100);
        Call call;
        long timeout;
        boolean interruptible;
        if (dice < 30) {
            call = Call.LOCK;
            timeout = -1;
            interruptible = false;
        }
        else if (dice < 40) {
            // lockInterruptibly(): waits without a timeout, like lock().
            call = Call.LOCK;
            timeout = -1;
            interruptible = true;
        }
        else if (dice < 60) {
            call = Call.TRY_LOCK;
            timeout = 0;
            interruptible = false;
        }
        else {
            call = Call.TRY_LOCK_TIMEOUT;
            timeout = 50 + random.nextInt(2950);
            interruptible = true;
        }
        long interruptAfter = (interruptible && random.nextInt(100) < 30)
                ? random.nextInt((int) ((timeout > 0) ? timeout : 1500)) : -1;
        String op = nextOp();
        this.history.record(new Request(System.nanoTime(), id(), thread, op, key, fair, call, timeout));
        boolean granted;
        Interrupt interrupt = (interruptAfter >= 0) ? new Interrupt(interruptAfter) : null;
        try {
            if (call == Call.LOCK && !interruptible) {
                lock.lock();
                granted = true;
            }
            else if (call == Call.LOCK) {
                lock.lockInterruptibly();
                granted = true;
            }
            else if (call == Call.TRY_LOCK) {
                granted = lock.tryLock();
            }
            else {
                granted = lock.tryLock(timeout, TimeUnit.MILLISECONDS);
            }
        }
        catch (InterruptedException ex) {
            long at = System.nanoTime();
            closeInterrupt(interrupt);
            this.history.record(new Refusal(at, id(), op, Failure.INTERRUPTED, String.valueOf(ex.getMessage())));
            return;
        }
        catch (RuntimeException ex) {
            long at = System.nanoTime();
            closeInterrupt(interrupt);
            this.history.record(new Refusal(at, id(), op, Failure.ERROR, ex.toString()));
            return;
        }
        long at = System.nanoTime();
        closeInterrupt(interrupt);
        if (!granted) {
            this.history.record(new Refusal(at, id(), op, Failure.TIMEOUT, call + " returned false"));
            return;
        }
        long fence = lock.getFence();
        this.history.record(new Grant(at, id(), op, fence));
        write(register, op, key, fence);
        Thread.sleep(1 + random.nextInt(20));
        if (random.nextInt(100) < 20) {
            reenter(random, thread, register, key);
        }
        if (random.nextBoolean()) {
            write(register, op, key, fence);
        }
        unlock(lock, op);
    }

    /**
     * One call of an {@code @DistributedLock} method: the grant is recorded when the method starts
     * (the interceptor holds the lock then), the unlock when it returns (the interceptor releases
     * right after), the release once the proxy call returned or threw {@code LockLostException}.
     */
    private void annotated(Random random, String thread, FencedRegister.Client register, String key)
            throws IOException, InterruptedException {
        int which = random.nextInt(3);
        boolean fair = which == 1;
        long timeout = (which == 0) ? LockedWork.UNFAIR_WAIT_MILLIS
                : (which == 1) ? LockedWork.FAIR_WAIT_MILLIS : 0;
        long sleep = 1 + random.nextInt(20);
        boolean writeTwice = random.nextBoolean();
        String op = nextOp();
        long[] unlocking = { -1 };
        IOException[] failed = { null };
        Runnable body = () -> {
            long fence = LockContext.currentFence();
            this.history.record(new Grant(System.nanoTime(), id(), op, fence));
            try {
                write(register, op, key, fence);
                Thread.sleep(sleep);
                if (writeTwice) {
                    write(register, op, key, fence);
                }
            }
            catch (IOException ex) {
                failed[0] = ex;
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
            }
            unlocking[0] = System.nanoTime();
            this.history.record(new Unlocking(unlocking[0], id(), op));
        };
        this.history.record(new Request(System.nanoTime(), id(), thread, op, key, fair, Call.ANNOTATION, timeout));
        try {
            switch (which) {
                case 0 -> this.locked.unfair(key, body);
                case 1 -> this.locked.fair(key, body);
                default -> this.locked.once(key, body);
            }
            this.history.record(new Release(unlocking[0], id(), op, false, System.nanoTime()));
        }
        catch (LockLostException ex) {
            this.history.record(new Release(unlocking[0], id(), op, true, System.nanoTime()));
        }
        catch (LockAcquisitionException ex) {
            Failure failure = (ex.getCause() == null) ? Failure.TIMEOUT
                    : (ex.getCause() instanceof InterruptedException) ? Failure.INTERRUPTED : Failure.ERROR;
            this.history.record(new Refusal(System.nanoTime(), id(), op, failure, ex.toString()));
        }
        if (failed[0] != null) {
            throw failed[0];
        }
    }

    /** Takes the held key again on this thread, through another lock object, writes with it and unlocks it. */
    private void reenter(Random random, String thread, FencedRegister.Client register, String key)
            throws IOException {
        FencedLock again = this.registry.obtain(key, random.nextBoolean());
        boolean once = random.nextBoolean();
        String op = nextOp();
        this.history.record(new Request(System.nanoTime(), id(), thread, op, key, again.isFair(),
                once ? Call.TRY_LOCK : Call.LOCK, once ? 0 : -1));
        boolean granted;
        try {
            if (once) {
                granted = again.tryLock();
            }
            else {
                again.lock();
                granted = true;
            }
        }
        catch (RuntimeException ex) {
            // LockLostException when the outer hold was lost meanwhile: the library says so, as documented.
            this.history.record(new Refusal(System.nanoTime(), id(), op, Failure.ERROR, ex.toString()));
            return;
        }
        long at = System.nanoTime();
        if (!granted) {
            this.history.record(new Refusal(at, id(), op, Failure.TIMEOUT, "reentrant tryLock() returned false"));
            return;
        }
        long fence = again.getFence();
        this.history.record(new Grant(at, id(), op, fence));
        write(register, op, key, fence);
        unlock(again, op);
    }

    private void write(FencedRegister.Client register, String op, String key, long fence) throws IOException {
        Answer answer = register.write(key, fence);
        this.history.record(new RegisterWrite(System.nanoTime(), id(), op, key, fence, answer.accepted(),
                answer.lastAccepted()));
    }

    /**
     * Unlocks and records it twice: {@link Unlocking} before the call (from then on the holder does
     * nothing under the lock, and the store may grant the next waiter before the call returns; a
     * kill during the call leaves that record), and {@link Release}, timed when the call began, once
     * it returned and so whether the hold was lost is known.
     */
    private void unlock(FencedLock lock, String op) {
        long at = System.nanoTime();
        this.history.record(new Unlocking(at, id(), op));
        try {
            lock.unlock();
            this.history.record(new Release(at, id(), op, false, System.nanoTime()));
        }
        catch (LockLostException ex) {
            this.history.record(new Release(at, id(), op, true, System.nanoTime()));
        }
        catch (RuntimeException ex) {
            // Not a documented outcome of unlock() by the holding thread: recorded as ended, and reported.
            this.history.record(new Release(at, id(), op, false, System.nanoTime()));
            this.unexpected.incrementAndGet();
            System.err.println("UNEXPECTED: unlock of " + op + " threw " + ex);
            ex.printStackTrace();
        }
    }

    private String nextOp() {
        return id() + ":" + this.operations.incrementAndGet();
    }

    private String id() {
        return this.settings.id();
    }

    private void closeInterrupt(Interrupt interrupt) {
        if (interrupt != null) {
            interrupt.close();
        }
    }

    /**
     * Interrupts the calling thread after a delay, but only while the call it guards runs: once
     * {@link #close()} returned, no interrupt comes and none is left pending, so that it cannot
     * hit the register write or the sleep of a hold.
     */
    private final class Interrupt {

        private final Thread thread = Thread.currentThread();

        private final ScheduledFuture<?> timer;

        private boolean open = true;

        Interrupt(long delayMillis) {
            this.timer = NemesisWorker.this.interrupter.schedule(this::fire, delayMillis, TimeUnit.MILLISECONDS);
        }

        private synchronized void fire() {
            if (this.open) {
                this.thread.interrupt();
            }
        }

        void close() {
            synchronized (this) {
                this.open = false;
            }
            this.timer.cancel(false);
            Thread.interrupted();
        }
    }

    /**
     * Methods locked by {@code @DistributedLock} on the key they are given, each running its body
     * while the interceptor holds the lock: an unfair wait, a fair wait, and one attempt.
     */
    public interface LockedWork {

        long UNFAIR_WAIT_MILLIS = 1_500;

        long FAIR_WAIT_MILLIS = 2_500;

        @DistributedLock(key = "#p0", waitTimeout = "1500ms")
        default void unfair(String key, Runnable body) {
            body.run();
        }

        @DistributedLock(key = "#p0", fair = true, waitTimeout = "2500ms")
        default void fair(String key, Runnable body) {
            body.run();
        }

        @DistributedLock(key = "#p0", waitTimeout = "0")
        default void once(String key, Runnable body) {
            body.run();
        }
    }

    /**
     * What a worker runs with, as {@code --name value} arguments.
     * @param store the {@link TestStore} spec of the store ({@code --store})
     * @param namespace the registry's namespace ({@code --namespace})
     * @param ttl the lease TTL ({@code --ttl-ms})
     * @param id the worker id, unique per started JVM ({@code --id})
     * @param historyDir where {@code <id>.history} goes ({@code --history-dir})
     * @param keys the lock keys, the hot one first ({@code --keys}, comma-separated, no whitespace)
     * @param threads contending threads ({@code --threads})
     * @param seed the run's seed ({@code --seed})
     * @param handoff whether local passes and linger are on ({@code --handoff on|off})
     * @param register the register's {@code host:port} ({@code --register})
     */
    record Settings(String store, String namespace, Duration ttl, String id, Path historyDir,
            List<String> keys, int threads, long seed, boolean handoff, String register) {

        static Settings parse(String[] args) {
            Map<String, String> values = new LinkedHashMap<>();
            for (int i = 0; i + 1 < args.length; i += 2) {
                if (!args[i].startsWith("--")) {
                    throw new IllegalArgumentException("expected --name value pairs, got " + Arrays.toString(args));
                }
                values.put(args[i].substring(2), args[i + 1]);
            }
            return new Settings(required(values, "store"), required(values, "namespace"),
                    Duration.ofMillis(Long.parseLong(required(values, "ttl-ms"))), required(values, "id"),
                    Path.of(required(values, "history-dir")), List.of(required(values, "keys").split(",")),
                    Integer.parseInt(required(values, "threads")), Long.parseLong(required(values, "seed")),
                    required(values, "handoff").equals("on"), required(values, "register"));
        }

        private static String required(Map<String, String> values, String name) {
            String value = values.get(name);
            if (value == null) {
                throw new IllegalArgumentException("missing --" + name);
            }
            return value;
        }

        String[] toArgs() {
            return new String[] { "--store", this.store, "--namespace", this.namespace,
                    "--ttl-ms", Long.toString(this.ttl.toMillis()), "--id", this.id, "--history-dir",
                    this.historyDir.toString(), "--keys", String.join(",", this.keys), "--threads",
                    Integer.toString(this.threads), "--seed", Long.toString(this.seed), "--handoff",
                    this.handoff ? "on" : "off", "--register", this.register };
        }
    }
}
