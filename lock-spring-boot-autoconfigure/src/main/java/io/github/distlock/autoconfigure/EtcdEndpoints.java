package io.github.distlock.autoconfigure;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Parses and checks {@code distributed-lock.etcd.endpoints}, and checks the endpoints of an
 * {@link EtcdConnectionDetails}.
 */
final class EtcdEndpoints {

    static final String PROPERTY = "distributed-lock.etcd.endpoints";

    /** Everything from the {@code //} to the last {@code @}: a password may contain {@code /}, {@code ?} or {@code #}. */
    private static final Pattern USER_INFO = Pattern.compile("//.*@");

    private EtcdEndpoints() {
    }

    /**
     * Parses endpoint URLs.
     * @param endpoints the configured URLs
     * @return the URLs, each with a scheme of http or https and a host
     * @throws IllegalArgumentException naming the property and the bad value, if the list is empty,
     * an entry is not such a URL, or http and https are mixed
     */
    static List<URI> parse(List<String> endpoints) {
        if (endpoints == null || endpoints.isEmpty()) {
            throw new IllegalArgumentException(PROPERTY + " must name at least one etcd member URL");
        }
        List<URI> uris = new ArrayList<>(endpoints.size());
        for (String endpoint : endpoints) {
            URI uri = parse(endpoint);
            if (!uris.isEmpty() && !uris.get(0).getScheme().equalsIgnoreCase(uri.getScheme())) {
                throw new IllegalArgumentException(PROPERTY + " mixes http and https ('" + uris.get(0) + "' and '"
                        + uri + "'); all members must be reached the same way");
            }
            uris.add(uri);
        }
        return uris;
    }

    /**
     * Returns whether an endpoint seems to carry credentials ({@code //user:password@host}).
     * Such a value is not checked while properties are bound: Spring Boot's report of a failed
     * binding prints the value as given. It is checked when the client is built, whose failure
     * prints only this class's redacted message.
     * @param endpoints the configured URLs
     * @return whether one of them has something before an {@code @} after its {@code //}
     */
    static boolean seemToCarryCredentials(List<String> endpoints) {
        return endpoints != null && endpoints.stream().anyMatch((endpoint) -> endpoint != null
                && USER_INFO.matcher(endpoint).find());
    }

    /**
     * Checks endpoint URLs that an {@link EtcdConnectionDetails} gave.
     * @param endpoints the URLs
     * @param source what gave them, for messages
     * @return the URLs
     * @throws IllegalArgumentException naming the source and the bad value, as {@link #parse(List)}
     */
    static List<URI> check(List<URI> endpoints, String source) {
        if (endpoints == null || endpoints.isEmpty()) {
            throw new IllegalArgumentException(source + " must name at least one etcd member URL");
        }
        List<URI> uris = new ArrayList<>(endpoints.size());
        for (URI endpoint : endpoints) {
            URI uri = check(endpoint, String.valueOf(endpoint), source);
            if (!uris.isEmpty() && !uris.get(0).getScheme().equalsIgnoreCase(uri.getScheme())) {
                throw new IllegalArgumentException(source + " mixes http and https ('" + uris.get(0) + "' and '"
                        + uri + "'); all members must be reached the same way");
            }
            uris.add(uri);
        }
        return uris;
    }

    /**
     * Returns whether the endpoints use TLS.
     * @param endpoints parsed endpoints
     * @return whether they use https
     */
    static boolean isSecure(List<URI> endpoints) {
        return "https".equalsIgnoreCase(endpoints.get(0).getScheme());
    }

    private static URI parse(String endpoint) {
        if (endpoint == null || endpoint.isBlank()) {
            throw invalid(PROPERTY, String.valueOf(endpoint), "it is empty");
        }
        URI uri;
        try {
            uri = new URI(endpoint.trim());
        }
        catch (URISyntaxException ex) {
            throw invalid(PROPERTY, endpoint,
                    ex.getReason() + ((ex.getIndex() >= 0) ? " at index " + ex.getIndex() : ""));
        }
        return check(uri, endpoint, PROPERTY);
    }

    private static URI check(URI uri, String endpoint, String source) {
        if (uri == null) {
            throw invalid(source, endpoint, "it is empty");
        }
        String scheme = (uri.getScheme() != null) ? uri.getScheme().toLowerCase(Locale.ROOT) : null;
        if (!"http".equals(scheme) && !"https".equals(scheme)) {
            throw invalid(source, endpoint, "the scheme must be http or https, as in http://127.0.0.1:2379");
        }
        if (uri.getHost() == null) {
            throw invalid(source, endpoint, "it has no valid host name or address");
        }
        if (uri.getRawUserInfo() != null) {
            throw invalid(source, endpoint,
                    "credentials do not belong in the URL; use distributed-lock.etcd.username and password");
        }
        if (uri.getPort() == 0 || uri.getPort() > 65535) {
            throw invalid(source, endpoint, "the port must be between 1 and 65535");
        }
        if (!(uri.getRawPath() == null || uri.getRawPath().isEmpty() || "/".equals(uri.getRawPath()))
                || uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw invalid(source, endpoint, "an etcd endpoint has no path, query or fragment");
        }
        return uri;
    }

    private static IllegalArgumentException invalid(String source, String endpoint, String problem) {
        return new IllegalArgumentException(source + " contains '" + redact(endpoint) + "', which is not a valid "
                + "etcd member URL: " + problem);
    }

    /** Hides credentials written into a URL, so that they never reach a log or a message. */
    private static String redact(String endpoint) {
        return USER_INFO.matcher(endpoint).replaceFirst("//***@");
    }
}
