package io.github.distlock.autoconfigure.app;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A new application that depends on the starter and configures nothing but
 * {@code distributed-lock.etcd.endpoints}.
 */
@SpringBootApplication
public class InventoryApplication {

    public static void main(String[] args) {
        SpringApplication.run(InventoryApplication.class, args);
    }
}
