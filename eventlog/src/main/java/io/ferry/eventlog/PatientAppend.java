package io.ferry.eventlog;

import io.ferry.model.Event;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BooleanSupplier;

/** {@link KafkaLog#appendPatiently}: one record sent until it is in the log, through an outage of any length. */
final class PatientAppend {
    private PatientAppend() {
    }

    /** Sends {@code r} (event {@code e}) with {@code producer} and waits until it is in, or {@code giveUp} says so. */
    static void append(KafkaProducer<byte[], byte[]> producer, ProducerRecord<byte[], byte[]> r, Event e,
                       String bootstrap, BooleanSupplier giveUp) {
        boolean said = false;
        while (true) {
            Future<?> sent = producer.send(r);
            while (true) {
                try {
                    sent.get(5, TimeUnit.SECONDS);
                    if (said) {
                        System.err.println("ferry: the event log at " + bootstrap + " is back; "
                                + e.getClass().getSimpleName() + " of " + e.job() + " is in it");
                    }
                    EventLines.log(e);
                    return;
                } catch (TimeoutException stillWaiting) {
                    // the producer still holds it: keep waiting
                } catch (ExecutionException failed) {
                    break; // the producer gave up on it: send it again
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted appending to " + KafkaLog.EVENTS, interrupted);
                }
                if (giveUp.getAsBoolean()) {
                    throw gaveUp(bootstrap);
                }
                if (!said) {
                    said = true;
                    System.err.println("ferry: the event log at " + bootstrap + " does not answer; "
                            + e.getClass().getSimpleName() + " of " + e.job() + " waits for it");
                }
            }
            if (giveUp.getAsBoolean()) {
                throw gaveUp(bootstrap);
            }
            try {
                Thread.sleep(1000);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted appending to " + KafkaLog.EVENTS, interrupted);
            }
        }
    }

    private static IllegalStateException gaveUp(String bootstrap) {
        return new IllegalStateException("cannot append to " + KafkaLog.EVENTS + " on " + bootstrap
                + ": gave up waiting");
    }
}
