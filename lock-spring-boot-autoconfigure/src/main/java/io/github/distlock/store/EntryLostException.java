package io.github.distlock.store;

/** An entry or its session vanished before the entry owned its key; a new entry may try again. */
public class EntryLostException extends Exception {

    private static final long serialVersionUID = 1L;

    private final boolean sessionLost;

    /**
     * @param reason why the entry vanished
     * @param sessionLost whether its session ended (the store failing) rather than the entry
     * being deleted (the store answering)
     */
    public EntryLostException(String reason, boolean sessionLost) {
        super(reason);
        this.sessionLost = sessionLost;
    }

    /** @return whether the entry's session ended, which counts as the store failing */
    public boolean isSessionLost() {
        return this.sessionLost;
    }
}
