package io.github.distlock.sample;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Several instances of the sample application in the test JVM, each a Spring context on a random
 * port, all connected to the same etcd (or Redis, ZooKeeper, database): what several JVMs behind a load balancer
 * would be.
 */
public final class SampleInstances implements AutoCloseable {

    private final List<ConfigurableApplicationContext> contexts;

    private SampleInstances(List<ConfigurableApplicationContext> contexts) {
        this.contexts = contexts;
    }

    /**
     * Starts {@code count} instances on etcd, one after the other, named {@code instance-1} and so on.
     * @param endpoints etcd endpoints
     * @param properties more properties for every instance ({@code name=value}), passed as
     * command-line arguments so that they override {@code application.yml}
     */
    public static SampleInstances start(int count, String endpoints, String... properties) {
        String[] all = new String[properties.length + 1];
        all[0] = "distributed-lock.etcd.endpoints=" + endpoints;
        System.arraycopy(properties, 0, all, 1, properties.length);
        return startWith(count, all);
    }

    /**
     * Starts {@code count} instances, one after the other, named {@code instance-1} and so on,
     * connected to the store that {@code properties} name (the defaults of {@code application.yml}
     * otherwise).
     * @param properties properties for every instance ({@code name=value}), passed as
     * command-line arguments so that they override {@code application.yml}
     */
    public static SampleInstances startWith(int count, String... properties) {
        return startEach(count, (instance) -> List.of(), properties);
    }

    /**
     * Starts {@code count} instances as {@link #startWith} does, each with more properties of its own.
     * @param perInstance properties of instance {@code i} (from 1), in addition to {@code properties}
     * @param properties properties for every instance
     */
    public static SampleInstances startEach(int count, IntFunction<List<String>> perInstance, String... properties) {
        SampleInstances instances = new SampleInstances(new ArrayList<>());
        try {
            for (int i = 1; i <= count; i++) {
                List<String> args = new ArrayList<>(List.of("--server.port=0", "--sample.instance-name=instance-" + i,
                        "--server.tomcat.basedir=target/tomcat"));
                Arrays.stream(properties).map(property -> "--" + property).forEach(args::add);
                perInstance.apply(i).stream().map(property -> "--" + property).forEach(args::add);
                instances.contexts.add(new SpringApplicationBuilder(SampleApplication.class).run(args.toArray(String[]::new)));
            }
            return instances;
        }
        catch (RuntimeException ex) {
            instances.close();
            throw ex;
        }
    }

    public int size() {
        return this.contexts.size();
    }

    /** @return a client for instance {@code index}, from 0 */
    public SampleHttp http(int index) {
        return new SampleHttp(Integer.parseInt(this.contexts.get(index).getEnvironment().getProperty("local.server.port")));
    }

    /** @return instance {@code index}'s application context */
    public ConfigurableApplicationContext context(int index) {
        return this.contexts.get(index);
    }

    @Override
    public void close() {
        this.contexts.forEach(ConfigurableApplicationContext::close);
    }
}
