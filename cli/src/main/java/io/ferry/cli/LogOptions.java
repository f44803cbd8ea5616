package io.ferry.cli;

import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;

/** {@code --home} and {@code --kafka}: where a command finds Ferry's state and event log. */
final class LogOptions {
    @Option(names = "--home", paramLabel = "DIR",
            description = "Ferry's state directory (default: $FERRY_HOME or ~/.ferry).")
    Path home;
    @Option(names = "--kafka", paramLabel = "HOST:PORT",
            description = "An external Kafka cluster instead of the home's log.")
    String kafka;

    FerryHome home() {
        return FerryHome.resolve(home);
    }

    LogConnection open() throws IOException {
        return LogConnection.open(home(), kafka);
    }
}
