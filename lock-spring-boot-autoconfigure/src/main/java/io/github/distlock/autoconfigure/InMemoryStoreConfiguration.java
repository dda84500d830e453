package io.github.distlock.autoconfigure;

import io.github.distlock.InMemoryLockRegistry;
import io.github.distlock.LockRegistry;
import io.github.distlock.autoconfigure.DistributedLockProperties.Store;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The JVM-local lock registry, for {@code distributed-lock.store=in-memory}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnStore(Store.IN_MEMORY)
class InMemoryStoreConfiguration {

    private static final Log logger = LogFactory.getLog(DistributedLockAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean(LockRegistry.class)
    InMemoryLockRegistry distributedLockRegistry(DistributedLockProperties properties) {
        logger.warn("distributed-lock.store=in-memory: locks are local to this JVM and do not exclude other "
                + "instances of the application; use distributed-lock.store=etcd, redis, zookeeper or jdbc when more than one instance runs");
        return new InMemoryLockRegistry(properties.getLocalHandoff().toLocalHandoff());
    }
}
