package io.github.distlock.autoconfigure;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Parses and checks {@code distributed-lock.etcd.endpoints}.
 */
final class EtcdEndpoints {

    static final String PROPERTY = "distributed-lock.etcd.endpoints";

    private static final Pattern USER_INFO = Pattern.compile("//[^/?#]*@");

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
     * Returns whether the endpoints use TLS.
     * @param endpoints parsed endpoints
     * @return whether they use https
     */
    static boolean isSecure(List<URI> endpoints) {
        return "https".equalsIgnoreCase(endpoints.get(0).getScheme());
    }

    private static URI parse(String endpoint) {
        if (endpoint == null || endpoint.isBlank()) {
            throw invalid(String.valueOf(endpoint), "it is empty");
        }
        URI uri;
        try {
            uri = new URI(endpoint.trim());
        }
        catch (URISyntaxException ex) {
            throw invalid(endpoint, ex.getReason() + ((ex.getIndex() >= 0) ? " at index " + ex.getIndex() : ""));
        }
        String scheme = (uri.getScheme() != null) ? uri.getScheme().toLowerCase(Locale.ROOT) : null;
        if (!"http".equals(scheme) && !"https".equals(scheme)) {
            throw invalid(endpoint, "the scheme must be http or https, as in http://127.0.0.1:2379");
        }
        if (uri.getHost() == null) {
            throw invalid(endpoint, "it has no valid host name or address");
        }
        if (uri.getRawUserInfo() != null) {
            throw invalid(endpoint, "credentials do not belong in the URL; use distributed-lock.etcd.username and password");
        }
        if (uri.getPort() == 0 || uri.getPort() > 65535) {
            throw invalid(endpoint, "the port must be between 1 and 65535");
        }
        if (!(uri.getRawPath() == null || uri.getRawPath().isEmpty() || "/".equals(uri.getRawPath()))
                || uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw invalid(endpoint, "an etcd endpoint has no path, query or fragment");
        }
        return uri;
    }

    private static IllegalArgumentException invalid(String endpoint, String problem) {
        return new IllegalArgumentException(PROPERTY + " contains '" + redact(endpoint) + "', which is not a valid "
                + "etcd member URL: " + problem);
    }

    /** Hides credentials written into a URL, so that they never reach a log or a message. */
    private static String redact(String endpoint) {
        return USER_INFO.matcher(endpoint).replaceFirst("//***@");
    }
}
