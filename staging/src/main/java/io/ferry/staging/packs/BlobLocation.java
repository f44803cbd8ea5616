package io.ferry.staging.packs;

/** Where a stored blob lies: its pack's name, its record's offset and length, and its raw length. */
public record BlobLocation(String pack, long offset, int recordLength, int length) {}
