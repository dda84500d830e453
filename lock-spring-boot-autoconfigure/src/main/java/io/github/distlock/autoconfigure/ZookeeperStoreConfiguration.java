package io.github.distlock.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.github.distlock.LockRegistry;
import io.github.distlock.autoconfigure.DistributedLockProperties.Store;
import io.github.distlock.autoconfigure.DistributedLockProperties.Zookeeper;
import io.github.distlock.zookeeper.ZookeeperLockRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.ACLProvider;
import org.apache.curator.framework.imps.CuratorFrameworkState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.StringUtils;

/**
 * The ZooKeeper lock registry, for {@code distributed-lock.store=zookeeper}, on a Curator client:
 * the application's own {@link CuratorFramework} bean, used as it is (started here if the
 * application has not started it), or else one built from {@code distributed-lock.zookeeper}
 * (connect string, session and connection timeouts, digest credentials) with an exponential
 * back-off retry policy. The registry depends on the client, so it is closed first on shutdown
 * and deletes its entries while the session is still there: the instance's locks are free at
 * once. A client built here is closed after it; the application's is left to the application.
 *
 * <p>Without Curator on the class path, start-up fails with a {@link NoZookeeperClientException}
 * that says what to add. A {@code LockRegistry} bean of the application replaces all of this.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnStore(Store.ZOOKEEPER)
class ZookeeperStoreConfiguration {

    static final String CURATOR_FRAMEWORK = "org.apache.curator.framework.CuratorFramework";

    static final String ZOOKEEPER_CLIENT = "org.apache.zookeeper.ZooKeeper";

    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = { CURATOR_FRAMEWORK, ZOOKEEPER_CLIENT })
    @ConditionalOnMissingBean(LockRegistry.class)
    static class CuratorRegistryConfiguration {

        private static final Log logger = LogFactory.getLog(ZookeeperStoreConfiguration.class);

        @Bean(destroyMethod = "close")
        @ConditionalOnMissingBean(CuratorFramework.class)
        CuratorFramework distributedLockCuratorFramework(DistributedLockProperties properties) {
            Zookeeper zookeeper = properties.getZookeeper();
            String username = zookeeper.getUsername();
            String password = zookeeper.getPassword();
            boolean hasUser = StringUtils.hasLength(username);
            PropertyChecks.together("distributed-lock.zookeeper.username", hasUser,
                    "distributed-lock.zookeeper.password", StringUtils.hasLength(password));
            CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(zookeeper.getConnectString())
                .sessionTimeoutMs((int) zookeeper.getSessionTimeout().toMillis())
                .connectionTimeoutMs((int) zookeeper.getConnectionTimeout().toMillis())
                .retryPolicy(new ExponentialBackoffRetry(100, 3));
            if (hasUser) {
                builder.authorization("digest", (username + ":" + password).getBytes(StandardCharsets.UTF_8))
                    .aclProvider(new CreatorOnlyAclProvider());
            }
            CuratorFramework client = builder.build();
            // Connects in the background: an unreachable ensemble must not stop the application.
            client.start();
            return client;
        }

        @Bean(destroyMethod = "close")
        ZookeeperLockRegistry distributedLockRegistry(CuratorFramework curator, DistributedLockProperties properties,
                Environment environment, BeanFactory beanFactory) {
            if (curator.getState() == CuratorFrameworkState.LATENT) {
                curator.start();
            }
            else if (curator.getState() == CuratorFrameworkState.STOPPED) {
                throw new IllegalStateException("distributed-lock.store=zookeeper cannot use the application's "
                        + "CuratorFramework: it is closed");
            }
            Zookeeper zookeeper = properties.getZookeeper();
            String description = describe(curator);
            ZookeeperLockRegistry.Builder builder = ZookeeperLockRegistry.builder(curator)
                .namespace(zookeeper.getNamespace())
                .requestTimeout(zookeeper.getRequestTimeout())
                .ownerIdentity(OwnerIdentity.resolve(properties, environment))
                .localHandoff(properties.getLocalHandoff().toLocalHandoff())
                .description(description);
            String lease = "session timeout set by the application's CuratorFramework";
            if (beanFactory.containsBean("distributedLockCuratorFramework")) {
                // The client was built from distributed-lock.zookeeper.session-timeout: warn if ZooKeeper grants another.
                builder.requestedSessionTimeout(zookeeper.getSessionTimeout());
                lease = "session timeout " + PropertyChecks.print(zookeeper.getSessionTimeout());
            }
            ZookeeperLockRegistry registry = builder.build();
            BackgroundConnect.announce(description, "namespace '" + zookeeper.getNamespace() + "'", lease, logger);
            BackgroundConnect.connect(registry, description, logger);
            return registry;
        }

        /** The ensemble the client connects to (connect strings carry no credentials). */
        private static String describe(CuratorFramework curator) {
            try {
                String connectString = curator.getZookeeperClient().getCurrentConnectionString();
                return StringUtils.hasText(connectString) ? "ZooKeeper at " + connectString : "ZooKeeper";
            }
            catch (RuntimeException ex) {
                return "ZooKeeper";
            }
        }
    }

    /**
     * Nodes readable and writable only by the authenticated user: with credentials, every
     * instance that uses them shares the locks, and nobody else can see or delete them.
     */
    static final class CreatorOnlyAclProvider implements ACLProvider {

        @Override
        public List<ACL> getDefaultAcl() {
            return ZooDefs.Ids.CREATOR_ALL_ACL;
        }

        @Override
        public List<ACL> getAclForPath(String path) {
            return ZooDefs.Ids.CREATOR_ALL_ACL;
        }
    }

    @Configuration(proxyBeanMethods = false)
    @Conditional(CuratorMissingCondition.class)
    @ConditionalOnMissingBean(LockRegistry.class)
    static class CuratorMissingConfiguration {

        @Bean
        LockRegistry distributedLockRegistry() {
            throw NoZookeeperClientException.notOnClassPath();
        }
    }

    /** Curator or the ZooKeeper client is not on the class path. */
    static class CuratorMissingCondition extends NoneNestedConditions {

        CuratorMissingCondition() {
            super(ConfigurationPhase.PARSE_CONFIGURATION);
        }

        @ConditionalOnClass(name = { CURATOR_FRAMEWORK, ZOOKEEPER_CLIENT })
        static class CuratorPresent {

        }
    }
}
