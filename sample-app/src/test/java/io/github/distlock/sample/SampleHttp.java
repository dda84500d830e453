package io.github.distlock.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import com.jayway.jsonpath.JsonPath;

/**
 * A small HTTP client for one sample instance. Every request is bounded, so a hung server fails
 * the test instead of blocking it.
 */
public final class SampleHttp {

    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(30);

    private static final HttpClient CLIENT = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .connectTimeout(Duration.ofSeconds(5))
        .build();

    private final String baseUrl;

    public SampleHttp(int port) {
        this.baseUrl = "http://127.0.0.1:" + port;
    }

    public Reply get(String path) {
        return send(request(path).GET());
    }

    public Reply post(String path) {
        return send(request(path).POST(HttpRequest.BodyPublishers.noBody()));
    }

    public Reply put(String path) {
        return send(request(path).PUT(HttpRequest.BodyPublishers.noBody()));
    }

    /** POST without waiting for the answer. */
    public CompletableFuture<Reply> postAsync(String path) {
        return CLIENT.sendAsync(request(path).POST(HttpRequest.BodyPublishers.noBody()).build(),
                HttpResponse.BodyHandlers.ofString()).thenApply(Reply::new);
    }

    private HttpRequest.Builder request(String path) {
        return HttpRequest.newBuilder(URI.create(this.baseUrl + path)).timeout(REQUEST_TIMEOUT);
    }

    private static Reply send(HttpRequest.Builder request) {
        try {
            return new Reply(CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString()));
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** An answer: status, headers and a JSON body. */
    public static final class Reply {

        private final HttpResponse<String> response;

        Reply(HttpResponse<String> response) {
            this.response = response;
        }

        public int status() {
            return this.response.statusCode();
        }

        public String body() {
            return this.response.body();
        }

        public String header(String name) {
            return this.response.headers().firstValue(name).orElse(null);
        }

        /** @return the value at a JSON path of the body, such as {@code $.code} */
        public <T> T json(String path) {
            return JsonPath.read(this.response.body(), path);
        }

        @Override
        public String toString() {
            return this.response.statusCode() + " " + this.response.body();
        }
    }
}
