package io.github.distlock.jdbc;

import org.junit.jupiter.api.BeforeAll;

/** The registry contract on H2. */
class H2LockRegistryContractTests extends AbstractJdbcLockRegistryContractTests {

    @BeforeAll
    static void startDatabase() {
        start(TestDatabase.Kind.H2);
    }
}
