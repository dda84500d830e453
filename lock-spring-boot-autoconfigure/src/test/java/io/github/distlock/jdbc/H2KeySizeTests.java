package io.github.distlock.jdbc;

import org.junit.jupiter.api.BeforeAll;

/** Key sizes on H2 (embedded). */
class H2KeySizeTests extends AbstractJdbcKeySizeTests {

    @BeforeAll
    static void startDatabase() {
        start(TestDatabase.Kind.H2);
    }
}
