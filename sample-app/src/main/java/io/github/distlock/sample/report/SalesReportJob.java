package io.github.distlock.sample.report;

import java.time.Duration;

import io.github.distlock.annotation.DistributedLock;
import io.github.distlock.annotation.OnTimeout;
import io.github.distlock.sample.SampleProperties;
import io.github.distlock.sample.sale.StockStore;
import io.github.distlock.sample.store.SampleStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * A report that every instance schedules but exactly one instance runs per tick. Time is cut into
 * ticks of {@code sample.report.interval}; each instance tries once per tick.
 *
 * <p>The lock alone is not enough: it keeps two runs from overlapping, but an instance whose
 * schedule fires after another instance's run has finished would get the free lock and run the
 * tick again. So the job also records the last tick it ran in the shared store, and checks that record (a
 * plain read, then a write) under the lock. An instance that finds the lock taken skips quietly
 * ({@link OnTimeout#SKIP}); one that finds the tick done skips too.
 */
@Component
@ConditionalOnBooleanProperty("sample.report.enabled")
public class SalesReportJob {

    private static final Logger logger = LoggerFactory.getLogger(SalesReportJob.class);

    private static final String LAST_TICK = "report/last-tick";

    private final SampleStore store;

    private final StockStore stock;

    private final String instance;

    private final Duration interval;

    public SalesReportJob(SampleStore store, StockStore stock, SampleProperties properties) {
        this.store = store;
        this.stock = stock;
        this.instance = properties.instanceName();
        this.interval = properties.report().interval();
    }

    @Scheduled(fixedRateString = "${sample.report.interval}", initialDelayString = "${sample.report.interval}")
    @DistributedLock(key = "'sales-report'", waitTimeout = "0", onTimeout = OnTimeout.SKIP)
    public void run() {
        long tick = System.currentTimeMillis() / this.interval.toMillis();
        long lastTick = this.store.get(LAST_TICK).map(Long::parseLong).orElse(-1L);
        if (lastTick >= tick) {
            logger.debug("Sales report #{} already ran, skipped on {}", tick, this.instance);
            return;
        }
        this.store.put(LAST_TICK, Long.toString(tick));
        logger.info("Sales report #{} ran on {}: stock {}", tick, this.instance, this.stock.all());
    }
}
