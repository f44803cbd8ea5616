package io.ferry.stores;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.core.functions.CheckedSupplier;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.LongAdder;

/**
 * A remote {@link Store} behind Resilience4j: every call goes through, outermost first,
 * <ol>
 *   <li>a bulkhead bounding objects (and a semaphore bounding bytes) in transfer at once, so a
 *       node never has more than {@link Resilience#maxFiles()} uploads open against the store; a
 *       call waits for room rather than failing;</li>
 *   <li>a retry of transient failures with exponential backoff and random jitter, so a thousand
 *       nodes that lost the store together do not come back in step;</li>
 *   <li>a circuit breaker: once the recent failure rate passes the threshold the store is
 *       considered down and calls fail at once with a {@link TransientStoreException} saying so,
 *       without touching it, until trial calls find it back.</li>
 * </ol>
 * A failure that outlives the retries surfaces as the store's own exception; the caller (the
 * node agent) keeps the image in its local cache and stages it again later. Not-found and
 * other permanent outcomes are neither retried nor counted against the store.
 */
public final class ResilientStore implements Store {
    private static final Logger LOG = LoggerFactory.getLogger(ResilientStore.class);
    private static final int BYTE_PERMIT = 1024; // bytes per semaphore permit, so GiB budgets fit an int

    private final Store inner;
    private final Resilience settings;
    private final Retry retry;
    private final CircuitBreaker breaker;
    private final Bulkhead files;
    private final Semaphore bytes;
    private final int bytePermits;
    private final LongAdder calls = new LongAdder();
    private final LongAdder retries = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder rejected = new LongAdder();

    public ResilientStore(Store inner, Resilience settings) {
        this.inner = inner;
        this.settings = settings;
        String name = inner.uri().toString();
        this.retry = Retry.of(name, RetryConfig.custom()
                .maxAttempts(settings.attempts())
                .intervalFunction(IntervalFunction.ofExponentialRandomBackoff(settings.initialBackoff(), 2.0,
                        settings.jitter(), settings.maxBackoff()))
                .retryOnException(e -> e instanceof StoreException s && s.isTransient())
                .build());
        this.breaker = CircuitBreaker.of(name, CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(settings.window())
                .minimumNumberOfCalls(Math.min(settings.window(), 5))
                .failureRateThreshold(settings.failureRate())
                .waitDurationInOpenState(settings.openFor())
                .automaticTransitionFromOpenToHalfOpenEnabled(true)
                .permittedNumberOfCallsInHalfOpenState(5) // a stale pooled connection or two must not re-open it
                .recordException(e -> e instanceof StoreException s && s.isTransient())
                .build());
        this.files = Bulkhead.of(name, BulkheadConfig.custom()
                .maxConcurrentCalls(settings.maxFiles())
                .maxWaitDuration(Duration.ofDays(1)) // wait for room, never fail for lack of it
                .build());
        this.bytePermits = (int) Math.max(1, Math.min(Integer.MAX_VALUE, settings.maxBytes() / BYTE_PERMIT));
        this.bytes = new Semaphore(bytePermits, true);
        retry.getEventPublisher().onRetry(e -> {
            retries.increment();
            // An expected failure (the store is slow or down): its reason, no stack trace. The
            // caller's MDC (job, generation, rank, node) is on the line where the caller set one.
            LOG.warn("store {}: try {} of {} failed, retrying in {} ms: {}", name, e.getNumberOfRetryAttempts(),
                    settings.attempts(), e.getWaitInterval().toMillis(), reason(e.getLastThrowable()));
        });
        breaker.getEventPublisher().onCallNotPermitted(e -> rejected.increment());
        breaker.getEventPublisher().onStateTransition(e ->
                LOG.warn("store {}: circuit {} ({})", name, e.getStateTransition(),
                        breaker.getMetrics().getFailureRate() + "% of recent calls failed"));
    }

    public Store inner() {
        return inner;
    }

    public Resilience settings() {
        return settings;
    }

    @Override
    public URI uri() {
        return inner.uri();
    }

    @Override
    public void put(String key, ByteBuffer data) throws StoreException {
        Keys.require(key);
        call("write " + key, data.remaining(), () -> {
            inner.put(key, data);
            return null;
        });
    }

    @Override
    public byte[] get(String key) throws StoreException {
        return call("read " + key, 0, () -> inner.get(key));
    }

    @Override
    public int read(String key, byte[] dst) throws StoreException {
        return call("read " + key, dst.length, () -> inner.read(key, dst));
    }

    @Override
    public void readRange(String key, long offset, byte[] dst, int dstOff, int len) throws StoreException {
        call("read " + key + " at " + offset, len, () -> {
            inner.readRange(key, offset, dst, dstOff, len);
            return null;
        });
    }

    @Override
    public long size(String key) throws StoreException {
        return call("look up " + key, 0, () -> inner.size(key));
    }

    @Override
    public boolean exists(String key) throws StoreException {
        return call("look up " + key, 0, () -> inner.exists(key));
    }

    @Override
    public List<String> list(String prefix) throws StoreException {
        return call("list " + prefix, 0, () -> inner.list(prefix));
    }

    @Override
    public void delete(String key) throws StoreException {
        call("delete " + key, 0, () -> {
            inner.delete(key);
            return null;
        });
    }

    @Override
    public int deleteAbandoned(Duration olderThan, boolean dryRun) throws StoreException {
        return call("delete abandoned temporary objects", 0, () -> inner.deleteAbandoned(olderThan, dryRun));
    }

    @Override
    public boolean putsDirectMemory() {
        return inner.putsDirectMemory();
    }

    @Override
    public StoreHealth health() {
        return new StoreHealth(breaker.getState().name(), calls.sum(), retries.sum(), failed.sum(), rejected.sum());
    }

    @Override
    public void close() throws IOException {
        inner.close();
    }

    @Override
    public String toString() {
        return inner.toString();
    }

    private <T> T call(String what, long size, CheckedSupplier<T> op) throws StoreException {
        calls.increment();
        int permits = (int) Math.min(bytePermits, Math.max(1, (size + BYTE_PERMIT - 1) / BYTE_PERMIT));
        CheckedSupplier<T> guarded = Bulkhead.decorateCheckedSupplier(files,
                Retry.decorateCheckedSupplier(retry, CircuitBreaker.decorateCheckedSupplier(breaker, op)));
        try {
            bytes.acquire(permits);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new TransientStoreException("interrupted waiting to " + what + " in " + inner.uri(), e);
        }
        try {
            return guarded.get();
        } catch (CallNotPermittedException e) {
            failed.increment();
            throw new TransientStoreException("store " + inner.uri() + " is considered down (circuit open after "
                    + "repeated failures; it is probed again within " + settings.openFor().toMillis()
                    + " ms): cannot " + what, e);
        } catch (BulkheadFullException e) {
            failed.increment();
            throw new TransientStoreException("no room to " + what + " in " + inner.uri() + ": " + e.getMessage(), e);
        } catch (ObjectNotFoundException e) {
            throw e; // an answer, not a failure
        } catch (StoreException | RuntimeException | Error e) {
            failed.increment();
            throw e;
        } catch (Throwable t) {
            failed.increment();
            throw new TransientStoreException("cannot " + what + " in " + inner.uri() + ": " + t, t);
        } finally {
            bytes.release(permits);
        }
    }

    private static String reason(Throwable t) {
        return t == null ? "unknown" : t.getMessage() != null ? t.getMessage() : t.getClass().getSimpleName();
    }
}
