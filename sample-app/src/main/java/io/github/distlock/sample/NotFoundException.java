package io.github.distlock.sample;

/** No order or item with the requested id exists; answered with 404. */
public class NotFoundException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String kind;

    private final String id;

    /**
     * @param kind what was looked for ({@code order}, {@code item})
     * @param id the id that was not found
     */
    public NotFoundException(String kind, String id) {
        super("No " + kind + " with id '" + id + "'");
        this.kind = kind;
        this.id = id;
    }

    public String getKind() {
        return this.kind;
    }

    public String getId() {
        return this.id;
    }
}
