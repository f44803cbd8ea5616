package io.ferry.stores.s3;

import io.ferry.stores.Keys;
import io.ferry.stores.ObjectNotFoundException;
import io.ferry.stores.PermanentStoreException;
import io.ferry.stores.Store;
import io.ferry.stores.StoreException;
import io.ferry.stores.TransientStoreException;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.exception.SdkException;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;
import software.amazon.awssdk.services.s3.model.CompletedPart;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Exception;
import software.amazon.awssdk.services.s3.model.S3Object;

import java.io.IOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A store in a bucket (under an optional prefix) of any S3-compatible service, through the AWS
 * SDK v2 with its synchronous Apache HTTP client.
 *
 * <p>S3 makes an object visible only when its PUT, or the completion of its multipart upload,
 * succeeds: a failed or interrupted write leaves nothing under the key (a failed multipart
 * upload is aborted; an abandoned one is invisible and removed by the bucket's lifecycle rule
 * for incomplete uploads). The SDK's own retries are off: {@link io.ferry.stores.ResilientStore}
 * retries, with jitter, and counts what it did.
 */
public final class S3Store implements Store {
    private final S3Client s3;
    private final URI uri;
    private final String bucket;
    private final String root; // "" or "prefix/"
    private final S3Settings settings;

    private S3Store(S3Client s3, URI uri, String bucket, String root, S3Settings settings) {
        this.s3 = s3;
        this.uri = uri;
        this.bucket = bucket;
        this.root = root;
        this.settings = settings;
    }

    public static S3Store open(URI uri, S3Settings settings) throws StoreException {
        String bucket = uri.getAuthority();
        if (bucket == null || bucket.isBlank() || uri.getQuery() != null || uri.getFragment() != null) {
            throw new IllegalArgumentException("S3 store URI must be s3://bucket[/prefix], got '" + uri + "'");
        }
        String path = uri.getPath() == null ? "" : uri.getPath().replaceAll("^/+|/+$", "");
        if (!path.isEmpty()) {
            Keys.require(path);
        }
        S3ClientBuilder b = S3Client.builder()
                .region(Region.of(settings.region()))
                .forcePathStyle(settings.pathStyle())
                .httpClientBuilder(Apache5HttpClient.builder()
                        .connectionTimeout(Duration.ofSeconds(5))
                        .socketTimeout(Duration.ofSeconds(60))
                        .maxConnections(64))
                .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry())
                        .apiCallTimeout(Duration.ofMinutes(5)))
                .credentialsProvider(credentials(settings));
        if (settings.endpoint() != null) {
            b.endpointOverride(settings.endpoint());
        }
        S3Store store = new S3Store(b.build(), uri, bucket, path.isEmpty() ? "" : path + "/", settings);
        store.checkBucket();
        return store;
    }

    /** The configured keys, else the SDK's default chain, resolved now so that none is a clear error. */
    private static AwsCredentialsProvider credentials(S3Settings settings) {
        if (settings.accessKeyId() != null) {
            return StaticCredentialsProvider.create(AwsBasicCredentials.create(settings.accessKeyId(),
                    settings.secretAccessKey()));
        }
        DefaultCredentialsProvider chain = DefaultCredentialsProvider.builder().build();
        try {
            chain.resolveCredentials();
        } catch (SdkException e) {
            throw new IllegalArgumentException("no S3 credentials: set s3.access-key-id and s3.secret-access-key,"
                    + " or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or an AWS profile");
        }
        return chain;
    }

    private void checkBucket() throws StoreException {
        try {
            s3.headBucket(r -> r.bucket(bucket));
        } catch (SdkException e) {
            s3.close();
            if (e instanceof S3Exception s && s.statusCode() == 404) {
                throw new PermanentStoreException("bucket '" + bucket + "' does not exist at "
                        + (settings.endpoint() == null ? "AWS" : settings.endpoint()), e);
            }
            throw classify("cannot reach bucket " + bucket, e);
        }
    }

    @Override
    public URI uri() {
        return uri;
    }

    @Override
    public void put(String key, ByteBuffer data) throws StoreException {
        String k = objectKey(key);
        try {
            if (data.remaining() <= settings.multipartThreshold()) {
                s3.putObject(r -> r.bucket(bucket).key(k), RequestBody.fromRemainingByteBuffer(data.duplicate()));
            } else {
                putMultipart(k, data.duplicate());
            }
        } catch (SdkException e) {
            throw classify("cannot write " + key + " in " + uri, e);
        }
    }

    /** Parts, then completion: the object appears whole at completion or not at all. */
    private void putMultipart(String k, ByteBuffer data) {
        String uploadId = s3.createMultipartUpload(r -> r.bucket(bucket).key(k)).uploadId();
        try {
            List<CompletedPart> parts = new ArrayList<>();
            int number = 1;
            while (data.hasRemaining()) {
                ByteBuffer part = data.slice();
                part.limit((int) Math.min(part.remaining(), settings.partSize()));
                data.position(data.position() + part.remaining());
                int n = number++;
                String etag = s3.uploadPart(r -> r.bucket(bucket).key(k).uploadId(uploadId).partNumber(n),
                        RequestBody.fromRemainingByteBuffer(part)).eTag();
                parts.add(CompletedPart.builder().partNumber(n).eTag(etag).build());
            }
            s3.completeMultipartUpload(r -> r.bucket(bucket).key(k).uploadId(uploadId)
                    .multipartUpload(m -> m.parts(parts)));
        } catch (SdkException e) {
            try {
                s3.abortMultipartUpload(r -> r.bucket(bucket).key(k).uploadId(uploadId));
            } catch (SdkException suppressed) {
                e.addSuppressed(suppressed); // the upload stays invisible; lifecycle rules reap it
            }
            throw e;
        }
    }

    @Override
    public byte[] get(String key) throws StoreException {
        String k = objectKey(key);
        try {
            return s3.getObjectAsBytes(r -> r.bucket(bucket).key(k)).asByteArrayUnsafe();
        } catch (NoSuchKeyException e) {
            throw new ObjectNotFoundException(key, uri.toString());
        } catch (SdkException e) {
            throw classify("cannot read " + key + " in " + uri, e);
        }
    }

    @Override
    public int read(String key, byte[] dst) throws StoreException {
        String k = objectKey(key);
        try (ResponseInputStream<GetObjectResponse> in = s3.getObject(r -> r.bucket(bucket).key(k))) {
            long length = in.response().contentLength();
            int n = in.readNBytes(dst, 0, dst.length);
            if (length > n) {
                in.abort(); // do not drain the rest of a larger object
            }
            return (int) Math.min(Integer.MAX_VALUE, Math.max(length, n));
        } catch (NoSuchKeyException e) {
            throw new ObjectNotFoundException(key, uri.toString());
        } catch (SdkException e) {
            throw classify("cannot read " + key + " in " + uri, e);
        } catch (IOException e) {
            throw new TransientStoreException("cannot read " + key + " in " + uri + ": " + e, e);
        }
    }

    @Override
    public void readRange(String key, long offset, byte[] dst, int dstOff, int len) throws StoreException {
        if (len == 0) {
            return;
        }
        String k = objectKey(key);
        String range = "bytes=" + offset + "-" + (offset + len - 1);
        try (ResponseInputStream<GetObjectResponse> in = s3.getObject(r -> r.bucket(bucket).key(k).range(range))) {
            int n = in.readNBytes(dst, dstOff, len);
            if (n < len) {
                throw new PermanentStoreException(key + " in " + uri + " ends before " + (offset + len)
                        + " bytes", null);
            }
        } catch (StoreException e) {
            throw e;
        } catch (NoSuchKeyException e) {
            throw new ObjectNotFoundException(key, uri.toString());
        } catch (S3Exception e) {
            if (e.statusCode() == 416) { // range not satisfiable: the object is shorter
                throw new PermanentStoreException(key + " in " + uri + " ends before " + (offset + len) + " bytes", e);
            }
            throw classify("cannot read " + key + " in " + uri, e);
        } catch (SdkException e) {
            throw classify("cannot read " + key + " in " + uri, e);
        } catch (IOException e) {
            throw new TransientStoreException("cannot read " + key + " in " + uri + ": " + e, e);
        }
    }

    @Override
    public long size(String key) throws StoreException {
        String k = objectKey(key);
        try {
            return s3.headObject(r -> r.bucket(bucket).key(k)).contentLength();
        } catch (NoSuchKeyException e) {
            throw new ObjectNotFoundException(key, uri.toString());
        } catch (S3Exception e) {
            if (e.statusCode() == 404) {
                throw new ObjectNotFoundException(key, uri.toString());
            }
            throw classify("cannot look up " + key + " in " + uri, e);
        } catch (SdkException e) {
            throw classify("cannot look up " + key + " in " + uri, e);
        }
    }

    @Override
    public boolean exists(String key) throws StoreException {
        String k = objectKey(key);
        try {
            s3.headObject(r -> r.bucket(bucket).key(k));
            return true;
        } catch (NoSuchKeyException e) {
            return false;
        } catch (S3Exception e) {
            if (e.statusCode() == 404) {
                return false;
            }
            throw classify("cannot look up " + key + " in " + uri, e);
        } catch (SdkException e) {
            throw classify("cannot look up " + key + " in " + uri, e);
        }
    }

    @Override
    public List<String> list(String prefix) throws StoreException {
        List<String> keys = new ArrayList<>();
        try {
            for (S3Object o : s3.listObjectsV2Paginator(r -> r.bucket(bucket).prefix(root + prefix)).contents()) {
                keys.add(o.key().substring(root.length()));
            }
        } catch (SdkException e) {
            throw classify("cannot list " + prefix + " in " + uri, e);
        }
        keys.sort(null);
        return keys;
    }

    @Override
    public void delete(String key) throws StoreException {
        String k = objectKey(key);
        try {
            s3.deleteObject(r -> r.bucket(bucket).key(k));
        } catch (SdkException e) {
            throw classify("cannot delete " + key + " in " + uri, e);
        }
    }

    @Override
    public void close() {
        s3.close();
    }

    @Override
    public String toString() {
        return uri.toString();
    }

    private String objectKey(String key) {
        return root + Keys.require(key);
    }

    /**
     * Throttling, server errors, timeouts and unreachable endpoints may pass; the rest (denied,
     * bad request, missing bucket) will not until someone changes something.
     */
    static StoreException classify(String what, SdkException e) {
        if (e instanceof S3Exception s) {
            int status = s.statusCode();
            String code = s.awsErrorDetails() == null ? "" : s.awsErrorDetails().errorCode();
            String msg = what + ": HTTP " + status + (code == null || code.isEmpty() ? "" : " " + code);
            if (status >= 500 || status == 429 || status == 408 || "SlowDown".equals(code)
                    || "RequestTimeout".equals(code)) {
                return new TransientStoreException(msg, e);
            }
            if (status == 403) {
                return new PermanentStoreException(msg
                        + " (access denied: check the credentials and the bucket policy)", e);
            }
            return new PermanentStoreException(msg, e);
        }
        // SdkClientException and the rest: refused connections, timeouts, resets.
        return new TransientStoreException(what + ": " + e.getMessage(), e);
    }
}
