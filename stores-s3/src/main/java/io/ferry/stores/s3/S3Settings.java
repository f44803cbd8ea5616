package io.ferry.stores.s3;

import java.net.URI;
import java.util.Map;
import java.util.Set;

/**
 * Where and how to reach an S3-compatible service. Each setting comes from a store option, else
 * from the usual AWS environment variable, else a default:
 * <ul>
 *   <li>{@code s3.endpoint}, else {@code AWS_ENDPOINT_URL_S3} or {@code AWS_ENDPOINT_URL}, else AWS itself;</li>
 *   <li>{@code s3.region}, else {@code AWS_REGION} or {@code AWS_DEFAULT_REGION}, else {@code us-east-1}
 *       (S3-compatible services on site ignore it but the request signature needs one);</li>
 *   <li>{@code s3.path-style} ({@code true}/{@code false}): path-style requests; default true when an
 *       endpoint is given (MinIO, Ceph RGW, s3proxy and most site services expect it), false for AWS;</li>
 *   <li>{@code s3.access-key-id} and {@code s3.secret-access-key}, else the SDK's default chain
 *       ({@code AWS_ACCESS_KEY_ID}/{@code AWS_SECRET_ACCESS_KEY}, profiles, instance roles);</li>
 *   <li>{@code s3.multipart-threshold-mib} (default 16): objects larger than this go up in parts of
 *       {@code s3.part-size-mib} (default 8, at least 5 as S3 requires).</li>
 * </ul>
 */
public record S3Settings(URI endpoint, String region, boolean pathStyle, String accessKeyId, String secretAccessKey,
                         long multipartThreshold, long partSize) {
    static final String ENDPOINT = "s3.endpoint";
    static final String REGION = "s3.region";
    static final String PATH_STYLE = "s3.path-style";
    static final String ACCESS_KEY_ID = "s3.access-key-id";
    static final String SECRET_ACCESS_KEY = "s3.secret-access-key";
    static final String MULTIPART_THRESHOLD = "s3.multipart-threshold-mib";
    static final String PART_SIZE = "s3.part-size-mib";
    static final Set<String> KEYS = Set.of(ENDPOINT, REGION, PATH_STYLE, ACCESS_KEY_ID, SECRET_ACCESS_KEY,
            MULTIPART_THRESHOLD, PART_SIZE);

    public S3Settings {
        if ((accessKeyId == null) != (secretAccessKey == null)) {
            throw new IllegalArgumentException(ACCESS_KEY_ID + " and " + SECRET_ACCESS_KEY + " go together");
        }
        if (partSize < (5L << 20)) {
            throw new IllegalArgumentException(PART_SIZE + " must be at least 5 (S3's smallest part), got "
                    + (partSize >> 20));
        }
        if (multipartThreshold < partSize) {
            throw new IllegalArgumentException(MULTIPART_THRESHOLD + " must be at least " + PART_SIZE);
        }
    }

    static S3Settings from(Map<String, String> options, Map<String, String> env) {
        String endpointText = first(options.get(ENDPOINT), env.get("AWS_ENDPOINT_URL_S3"), env.get("AWS_ENDPOINT_URL"));
        URI endpoint = null;
        if (endpointText != null) {
            endpoint = URI.create(endpointText.trim());
            if (endpoint.getScheme() == null || endpoint.getHost() == null
                    || !(endpoint.getScheme().equals("http") || endpoint.getScheme().equals("https"))) {
                throw new IllegalArgumentException(ENDPOINT + " must be an http(s)://host[:port] URL, got '"
                        + endpointText + "'");
            }
        }
        String region = first(options.get(REGION), env.get("AWS_REGION"), env.get("AWS_DEFAULT_REGION"), "us-east-1");
        String pathStyleText = options.getOrDefault(PATH_STYLE, endpoint != null ? "true" : "false").trim();
        if (!pathStyleText.equals("true") && !pathStyleText.equals("false")) {
            throw new IllegalArgumentException(PATH_STYLE + " must be true or false, got '" + pathStyleText + "'");
        }
        return new S3Settings(endpoint, region, Boolean.parseBoolean(pathStyleText), options.get(ACCESS_KEY_ID),
                options.get(SECRET_ACCESS_KEY), mib(options, MULTIPART_THRESHOLD, 16), mib(options, PART_SIZE, 8));
    }

    private static long mib(Map<String, String> options, String key, int dflt) {
        String v = options.get(key);
        if (v == null) {
            return (long) dflt << 20;
        }
        try {
            int n = Integer.parseInt(v.trim());
            if (n < 1 || n > 5 * 1024) {
                throw new NumberFormatException();
            }
            return (long) n << 20;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + " must be a whole number of MiB within 1..5120, got '" + v + "'");
        }
    }

    private static String first(String... values) {
        for (String v : values) {
            if (v != null && !v.isBlank()) {
                return v;
            }
        }
        return null;
    }
}
