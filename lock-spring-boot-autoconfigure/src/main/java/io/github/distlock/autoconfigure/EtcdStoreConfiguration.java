package io.github.distlock.autoconfigure;

import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.etcd.jetcd.Client;
import io.github.distlock.LockRegistry;
import io.github.distlock.autoconfigure.DistributedLockProperties.Etcd;
import io.github.distlock.autoconfigure.DistributedLockProperties.Store;
import io.github.distlock.etcd.EtcdLockRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The jetcd client and the etcd lock registry, for {@code distributed-lock.store=etcd}. Both are
 * closed on shutdown, the registry first, so that held locks are released while the client is
 * still open. The client connects where the {@link EtcdConnectionDetails} bean says: the
 * application's, one from a {@code @ServiceConnection} container or a Docker Compose service, or
 * else one from {@code distributed-lock.etcd.*}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(Client.class)
@ConditionalOnStore(Store.ETCD)
class EtcdStoreConfiguration {

    private static final Log logger = LogFactory.getLog(EtcdStoreConfiguration.class);

    /**
     * The client this configuration built, if it built one: only then are the endpoints it
     * connects to those of the connection details (an application's own {@code Client} bean
     * connects wherever it was built for).
     */
    private volatile @Nullable Client builtClient;

    @Bean
    @ConditionalOnMissingBean(EtcdConnectionDetails.class)
    PropertiesEtcdConnectionDetails etcdConnectionDetails(DistributedLockProperties properties) {
        return new PropertiesEtcdConnectionDetails(properties.getEtcd());
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    Client etcdClient(EtcdConnectionDetails connectionDetails, DistributedLockProperties properties) {
        Client client = EtcdClientFactory.create(connectionDetails, properties.getEtcd());
        this.builtClient = client;
        return client;
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(LockRegistry.class)
    EtcdLockRegistry distributedLockRegistry(Client etcdClient, ObjectProvider<EtcdConnectionDetails> connectionDetails,
            DistributedLockProperties properties, Environment environment) {
        Etcd etcd = properties.getEtcd();
        // Messages name the endpoints only where they are known to be the client's.
        List<String> endpoints = (etcdClient == this.builtClient)
                ? EtcdClientFactory.endpoints(connectionDetails.getObject()) : List.of();
        EtcdLockRegistry.Builder builder = EtcdLockRegistry.builder(etcdClient)
            .namespace(etcd.getNamespace())
            .leaseTtl(etcd.getLeaseTtl())
            .requestTimeout(etcd.getRequestTimeout())
            .ownerIdentity(OwnerIdentity.resolve(properties, environment))
            .localHandoff(properties.getLocalHandoff().toLocalHandoff());
        if (!endpoints.isEmpty()) {
            builder.endpoints(endpoints);
        }
        EtcdLockRegistry registry = builder.build();
        String description = endpoints.isEmpty() ? "etcd (the application's Client)" : "etcd at " + endpoints;
        BackgroundConnect.announce(description, "namespace '" + etcd.getNamespace() + "'",
                "lease TTL " + PropertyChecks.print(etcd.getLeaseTtl()), logger);
        if (etcd.isFailFast()) {
            awaitConnected(registry, etcd, endpoints);
            return registry;
        }
        BackgroundConnect.connect(registry, endpoints.isEmpty() ? "etcd" : description, logger);
        return registry;
    }

    /** Fail-fast: a session lease and the watch stream, or no application. */
    private static void awaitConnected(EtcdLockRegistry registry, Etcd etcd, List<String> endpoints) {
        // connect() grants the lease and opens the watch within one request timeout; the rest is slack.
        long boundMillis = 2 * etcd.getRequestTimeout().toMillis() + 1_000;
        Throwable failure;
        try {
            registry.connect().get(boundMillis, TimeUnit.MILLISECONDS);
            return;
        }
        catch (ExecutionException ex) {
            // "Could not connect to etcd at [...]: <what failed>": keep the part after the endpoints.
            Throwable connectFailure = (ex.getCause() != null) ? ex.getCause() : ex;
            failure = (connectFailure.getCause() != null) ? connectFailure.getCause() : connectFailure;
        }
        catch (TimeoutException ex) {
            failure = new TimeoutException("no session within " + boundMillis + " ms");
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            failure = ex;
        }
        registry.close();
        throw new EtcdUnreachableException(endpoints, failure);
    }
}
