package io.ferry.staging;

import io.ferry.model.ConfigKey;
import io.ferry.model.ConfigTable;
import io.ferry.model.LaunchSpec;
import io.ferry.model.Manifest;
import io.ferry.model.PartnerRing;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Staging settings, parsed once from the declared table {@link #TABLE}.
 *
 * @param chunkSize        bytes per chunk; a multiple of 4096 so chunks stay page-aligned
 * @param zstdLevel        zstd level for chunks
 * @param workers          threads that hash, compress, write and read chunks
 * @param minRatio         a chunk is stored raw unless raw/compressed reaches this
 * @param maxBytesInFlight raw bytes buffered between stages; with one output buffer per worker this
 *                         bounds memory at about {@code maxBytesInFlight + workers x chunkSize},
 *                         whatever the image size (pack layout: plus two packs of at most half of it)
 * @param keepGenerations  generations a node-local cache keeps per job
 * @param fileSha256       whether a push also records each file's whole SHA-256 (manifest version 1)
 * @param packs            whether a push writes the pack layout (blobs cut by content, in packs)
 * instead of chunk objects
 * @param packSize         stored bytes after which a pack is closed and written
 * @param blobSize         average blob size of the pack layout (FastCDC); blobs are from it (less
 * 64 bytes) to four times it
 * @param dedupGenerations the rank's earlier generations a pack-layout push deduplicates against
 * @param dedupCache       heap bytes a node's cache of blob places may take
 * @param packsInFlight    packs a push holds at once, one filling and the others being written
 * @param planes           whether chunks that zstd shrinks little are also tried over byte planes (codec 2)
 * @param lz4              whether chunks that LZ4 halves are stored with LZ4 (codec 3) rather than zstd
 * @param passEnv          the store credentials of the agent's environment its ranks inherit (rank.pass-env);
 *                         here because the agent reads the job's settings through its staging pipeline
 * @param partnerTimeout   the longest a node's partner copy of one generation may take (cache.partner-timeout);
 *                         zero: 30 s and 20 ms a MiB
 */
public record StagingConfig(int chunkSize, int zstdLevel, int workers, double minRatio, long maxBytesInFlight,
                            int keepGenerations, boolean fileSha256, boolean packs, int packSize, int blobSize,
                            int dedupGenerations, long dedupCache, int packsInFlight, boolean planes, boolean lz4,
                            List<String> passEnv, Duration partnerTimeout) {
    public static final ConfigKey<Long> CHUNK_SIZE = ConfigKey.sizeKey("staging.chunk-size",
            "Chunk size: a multiple of 4 KiB between 4 KiB and 64 MiB.", "4MiB", Manifest.MIN_CHUNK_SIZE,
            Manifest.MAX_CHUNK_SIZE);
    public static final ConfigKey<Integer> ZSTD_LEVEL = ConfigKey.intKey("staging.zstd-level",
            "zstd compression level (-7..22); 1 is fast and compresses checkpoint images well.", 1, -7, 22);
    public static final ConfigKey<Integer> WORKERS = ConfigKey.intKey("staging.workers",
            "Worker threads for hashing, compression and store I/O; 0 means three per CPU (at least 4, at most 64),"
                    + " because workers also wait on fsync and remote stores.", 0, 0, 256);
    public static final ConfigKey<Double> MIN_RATIO = ConfigKey.doubleKey("staging.min-compression-ratio",
            "Store a chunk raw unless compression shrinks it by at least this ratio (raw/compressed); the default"
                    + " keeps zstd for anything that saves 2%, since zstd decodes near-raw data at memory speed.",
                    1.02, 1.0, 100.0);
    public static final ConfigKey<Boolean> PLANES = new ConfigKey<>("staging.planes",
            "Also try zstd over the bytes regrouped into eight planes (byte k of every 8-byte element"
                    + " together, the 'shuffle' of HDF5 and Blosc) for chunks that plain zstd shrinks"
                    + " by less than 30%: arrays of doubles or longs then compress much better, and"
                    + " faster (docs/formats/chunk.md, codec 2). Each worker then also holds two more"
                    + " buffers of a chunk (the regrouped bytes, the losing result). Off: plain zstd"
                    + " only, as Ferry wrote before; pulls read both.", "on", StagingConfig::parseBoolean);
    public static final ConfigKey<Boolean> LZ4 = new ConfigKey<>("staging.lz4",
            "Store a chunk with LZ4 (docs/formats/chunk.md, codec 3) when LZ4 shrinks it to half or less:"
                    + " heap pages and much machine code then compress 1.4x to 1.6x and decode 3x faster than"
                    + " with zstd level 1, for about a quarter more stored bytes of them (on the benchmark's"
                    + " seeded image, 6% more in all, still 8% less than zstd -1 on the files). Off: zstd for"
                    + " every chunk, for stores whose bandwidth or space is the limit; pulls read both.",
            "on", StagingConfig::parseBoolean);
    public static final ConfigKey<Long> MAX_IN_FLIGHT = ConfigKey.sizeKey("staging.max-bytes-in-flight",
            "Raw chunk bytes buffered between pipeline stages (the reader blocks beyond it); each worker"
                    + " also holds one output buffer of a chunk.", "64MiB", 1L << 20, 16L << 30);
    public static final ConfigKey<Integer> KEEP_GENERATIONS = ConfigKey.intKey("cache.keep-generations",
            "Generations of each job kept in a node-local cache (never the newest established one, one"
                    + " newer than it, nor one not yet staged).", 2, 1, 1000);

    public static final ConfigKey<Boolean> FILE_SHA256 = new ConfigKey<>("staging.file-sha256",
            "Also record each file's whole SHA-256 in its manifest (manifest version 1, which Ferry before"
                    + " manifest version 2 reads). Off, the chunk ids (each the SHA-256 of its bytes) prove every file,"
                    + " and a push reads each file once without hashing it a second time on one thread.",
            "false", StagingConfig::parseBoolean);

    public static final ConfigKey<Boolean> LAYOUT_PACKS = new ConfigKey<>("staging.layout",
            "How a push writes an image: 'chunks' (one object per 4 MiB chunk, manifest version 1/2) or 'packs'"
                    + " (blobs cut by content, about 64 KiB, deduplicated against the rank's latest generations"
                    + " and packed into objects of about 16 MiB with one durable write each; manifest version"
                    + " 3, docs/formats/pack.md). Pulls read both.", "packs", StagingConfig::parseLayout);
    public static final ConfigKey<Long> PACK_SIZE = ConfigKey.sizeKey("staging.pack-size",
            "Stored bytes after which a pack is closed and written with one durable put (pack layout),"
                    + " 1 MiB..64 MiB; at most"
                    + " staging.max-bytes-in-flight over staging.packs-in-flight, since a push holds that many packs.",
                    "16MiB",
            1L << 20, 64L << 20);
    public static final ConfigKey<Integer> PACKS_IN_FLIGHT = ConfigKey.intKey("staging.packs-in-flight",
            "Packs a push holds at once: one being filled, the others being written, each with its own durable put."
                    + " Written one at a time, a pack's fsync waits for the disk alone; a disk behind a queue (NVMe, a"
                    + " virtio or network volume, a parallel file system) writes several at once much faster (measured"
                    + " here: 356 MB/s one at a time, 929 MB/s four at a time). Packs are then at most"
                    + " staging.max-bytes-in-flight over this many. 2..64.", 4, 2, 64);
    public static final ConfigKey<Long> BLOB_SIZE = ConfigKey.sizeKey("staging.blob-size",
            "Average blob size of the pack layout, a power of two: content-defined cuts give"
                    + " blobs of it (less 64 bytes) to four times it, about 1.3 times it on"
                    + " average. Smaller finds more repeats in scattered rewrites, at more index"
                    + " entries per GiB (benchmarks/run-chunking.sh measured 64 KiB).", "64KiB", 4L << 10, 4L << 20);
    public static final ConfigKey<Integer> DEDUP_GENERATIONS = ConfigKey.intKey("staging.dedup-generations",
            "Latest earlier generations of the same rank a pack-layout push looks its blobs up in (their manifests,"
                    + " read once and cached); blobs found nowhere are written again. 0..8; 0 also skips the"
                    + " manifests of the node's other ranks, while ranks pushed together still write a blob they"
                    + " share once.", 2, 0, 8);
    public static final ConfigKey<Long> DEDUP_CACHE = ConfigKey.sizeKey("staging.dedup-cache",
            "Heap a node's cache of blob places may take (about 150 bytes a blob: 64 MiB holds the places of about"
                    + " 27 GiB of 64 KiB blobs); least recently used manifests are dropped beyond it.",
                    "64MiB", 0L, 16L << 30);

    /**
     * Read by the coordinator ({@code ferry run --partner}); declared here so every node accepts the job's settings.
     */
    public static final ConfigKey<Boolean> PARTNER = new ConfigKey<>("cache.partner",
            "Copy each node's images into one other node's cache right after capture (SCR's PARTNER level), so"
                    + " losing a node does not force a restart from the remote store; set by ferry run --partner.",
            "false", StagingConfig::parseBoolean);
    public static final ConfigKey<Map<String, String>> PARTNER_DOMAINS = new ConfigKey<>(
            "cache.partner-domains", "NODE=DOMAIN,... : partners are chosen in other failure domains where possible;"
                    + " set by ferry run --failure-domains FILE.", "", PartnerRing::parseDomains);

    /** Read by the agent, which gives up a partner copy past it (the images are staged to the store all the same). */
    public static final ConfigKey<Duration> PARTNER_TIMEOUT = ConfigKey.durationKey("cache.partner-timeout",
            "The longest a node's partner copy of one generation may take: past it the copy is given up (a frozen or"
                    + " overloaded partner) and staging to the store goes on; the ranks' restart then falls through to"
                    + " the store. 0: 30 s plus 20 ms a MiB of the images.", "0s", Duration.ZERO,
            Duration.ofHours(1));

    /** Read by the coordinator, which prunes the job's generations on the store after each establishment. */
    public static final ConfigKey<Integer> STORE_KEEP_GENERATIONS = ConfigKey.intKey("store.keep-generations",
            "Established generations of the job kept on the store (the coordinator prunes"
                    + " older ones after each snapshot, as ferry store prune --keep-last;"
                    + " their chunks go at the next ferry store gc); 0 keeps all.",
            0, 0, 1_000_000);

    /** Read by the coordinator, which decides rollbacks (with --auto-recover). */
    public static final ConfigKey<Integer> RECOVERY_MAX_ATTEMPTS = ConfigKey.intKey("recovery.max-attempts",
            "Rollbacks in a row without a newer established snapshot before the job fails"
                    + " with the reason, as a batch system's requeue limit (a rank that fails"
                    + " at start would otherwise be rolled back for ever); 0: no limit.",
            5, 0, 1_000_000);
    /** Read by the coordinator. */
    public static final ConfigKey<Duration> RECOVERY_BACKOFF = ConfigKey.durationKey("recovery.backoff",
            "Wait before a second rollback in a row without progress, doubling for each further one (at most"
                    + " recovery.max-backoff); the first rollback after progress never waits.", "2s",
            Duration.ZERO, Duration.ofDays(1));
    /** Read by the coordinator. */
    public static final ConfigKey<Duration> RECOVERY_MAX_BACKOFF =
            ConfigKey.durationKey("recovery.max-backoff",
            "The longest wait between two rollbacks.", "5m", Duration.ZERO, Duration.ofDays(1));

    /** Read by the agent when it starts the job's ranks, and by ferry run when it starts the site's launcher. */
    public static final ConfigKey<List<String>> PASS_ENV = new ConfigKey<>("rank.pass-env",
            "Store credentials of the agent's environment the job's ranks inherit, comma-separated, e.g."
                    + " AWS_PROFILE,AWS_SHARED_CREDENTIALS_FILE; by default ranks get none of AWS_*, AZURE_*,"
                    + " GOOGLE_APPLICATION_CREDENTIALS, KRB5CCNAME, KRB5_KTNAME, KRB5_CLIENT_KTNAME,"
                    + " HADOOP_TOKEN_FILE_LOCATION, HADOOP_TOKEN (Ferry's own FERRY_* secrets never).", "",
            LaunchSpec::parsePassEnv);

    public static final ConfigTable TABLE =
            new ConfigTable(List.of(CHUNK_SIZE, ZSTD_LEVEL, WORKERS, MIN_RATIO, PLANES, LZ4,
            MAX_IN_FLIGHT, KEEP_GENERATIONS, FILE_SHA256, LAYOUT_PACKS, PACK_SIZE, PACKS_IN_FLIGHT, BLOB_SIZE,
            DEDUP_GENERATIONS, DEDUP_CACHE, PARTNER, PARTNER_DOMAINS, PARTNER_TIMEOUT, STORE_KEEP_GENERATIONS,
            RECOVERY_MAX_ATTEMPTS, RECOVERY_BACKOFF,
            RECOVERY_MAX_BACKOFF, PASS_ENV));

    /**
     * The job's partner policy from its settings: empty when partner copies are off, else
     * each node's failure domain (possibly none given). Keys of other tables are ignored.
     */
    public static Optional<Map<String, String>> partner(Map<String, String> settings) {
        String on = settings.get(PARTNER.name());
        if (on == null || !PARTNER.parse(on)) {
            return Optional.empty();
        }
        return Optional.of(PARTNER_DOMAINS.parse(settings.getOrDefault(PARTNER_DOMAINS.name(), "")));
    }

    private static boolean parseLayout(String s) {
        return switch (s) {
            case "packs" -> true;
            case "chunks" -> false;
            default -> throw new IllegalArgumentException("'chunks' or 'packs'");
        };
    }

    private static boolean parseBoolean(String s) {
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "true", "on", "yes", "1" -> true;
            case "false", "off", "no", "0" -> false;
            default -> throw new IllegalArgumentException("true or false");
        };
    }

    public StagingConfig {
        passEnv = List.copyOf(passEnv);
        if (chunkSize < Manifest.MIN_CHUNK_SIZE || chunkSize > Manifest.MAX_CHUNK_SIZE || chunkSize % 4096 != 0) {
            throw new IllegalArgumentException(CHUNK_SIZE.name() + " must be a multiple of 4096 within "
                    + Manifest.MIN_CHUNK_SIZE + ".." + Manifest.MAX_CHUNK_SIZE + ", got " + chunkSize);
        }
        if (packsInFlight < 2) {
            throw new IllegalArgumentException(PACKS_IN_FLIGHT.name()
                    + " must be >= 2 (one filling, one being written), got "
                    + packsInFlight);
        }
        if (workers < 1) {
            throw new IllegalArgumentException(WORKERS.name() + " must be >= 1, got " + workers);
        }
        if (blobSize < 4096 || Integer.bitCount(blobSize) != 1) {
            throw new IllegalArgumentException(BLOB_SIZE.name()
                    + " must be a power of two from 4 KiB, got " + blobSize);
        }
    }

    public static StagingConfig defaults() {
        return from(Map.of());
    }

    /** Parses user settings; unknown keys and bad values fail naming the key. */
    public static StagingConfig from(Map<String, String> settings) {
        ConfigTable.Resolved r = TABLE.resolve(settings);
        long chunk = r.get(CHUNK_SIZE);
        if (chunk % 4096 != 0) {
            throw new IllegalArgumentException(CHUNK_SIZE.name() + " must be a multiple of 4096, got " + chunk);
        }
        r.get(PARTNER); // validated here, read by the coordinator (see partner())
        r.get(PARTNER_DOMAINS);
        r.get(STORE_KEEP_GENERATIONS);
        int workers = r.get(WORKERS);
        return new StagingConfig((int) chunk, r.get(ZSTD_LEVEL),
                workers == 0 ? Math.min(64, Math.max(4, 3 * Runtime.getRuntime().availableProcessors())) : workers,
                r.get(MIN_RATIO),
                r.get(MAX_IN_FLIGHT), r.get(KEEP_GENERATIONS), r.get(FILE_SHA256), r.get(LAYOUT_PACKS),
                (int) (long) r.get(PACK_SIZE), (int) (long) r.get(BLOB_SIZE), r.get(DEDUP_GENERATIONS),
                r.get(DEDUP_CACHE),
                r.get(PACKS_IN_FLIGHT), r.get(PLANES), r.get(LZ4), r.get(PASS_ENV), r.get(PARTNER_TIMEOUT));
    }

    /** Buffers of one chunk each that fit the in-flight budget, never fewer than workers + 2. */
    public int buffers() {
        return (int) Math.max(workers + 2L, maxBytesInFlight / chunkSize);
    }

    /** Bytes of file a pack-layout push reads at once and hands to one worker: at least the largest blob. */
    public int segmentSize() {
        return Math.max(4 << 20, 4 * blobSize);
    }

    /** Segment buffers of a pack-layout push that fit the in-flight budget, never fewer than workers + 2. */
    public int segments() {
        return (int) Math.max(workers + 2L, maxBytesInFlight / segmentSize());
    }

    /**
     * Stored bytes after which a push closes a pack: {@code staging.pack-size}, but at most the in-flight
     * budget over the packs a push holds ({@code staging.packs-in-flight}), and at least 1 MiB.
     */
    public int effectivePackSize() {
        return (int) Math.max(1L << 20, Math.min(packSize, maxBytesInFlight / packsInFlight));
    }
}
