package io.github.distlock.autoconfigure;

import io.etcd.jetcd.Client;
import io.github.distlock.LockRegistry;
import io.github.distlock.autoconfigure.DistributedLockProperties.Etcd;
import io.github.distlock.autoconfigure.DistributedLockProperties.Store;
import io.github.distlock.etcd.EtcdLockRegistry;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The jetcd client and the etcd lock registry, for {@code distributed-lock.store=etcd}. Both are
 * closed on shutdown, the registry first, so that held locks are released while the client is
 * still open.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(Client.class)
@ConditionalOnStore(Store.ETCD)
class EtcdStoreConfiguration {

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    Client etcdClient(DistributedLockProperties properties) {
        return EtcdClientFactory.create(properties.getEtcd());
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean(LockRegistry.class)
    EtcdLockRegistry distributedLockRegistry(Client etcdClient, DistributedLockProperties properties,
            Environment environment) {
        Etcd etcd = properties.getEtcd();
        return EtcdLockRegistry.builder(etcdClient)
            .namespace(etcd.getNamespace())
            .leaseTtl(etcd.getLeaseTtl())
            .requestTimeout(etcd.getRequestTimeout())
            .endpoints(etcd.getEndpoints())
            .ownerIdentity(OwnerIdentity.resolve(properties, environment))
            .build();
    }
}
