import ArgumentParser

/// curl's `--compressed`: ask for a compressed body and decode it. Trawl always does (gzip and deflate, decoded by
/// the engine with its size and ratio limits) unless `-H` sets `Accept-Encoding`, which gets the raw bytes; the
/// flag is accepted so that a curl command line runs unchanged.
struct CompressionFlags: ParsableArguments {
    @Flag(
        name: .customLong("compressed"),
        help: "Ask for a compressed response (gzip, deflate) and decode it, as curl does (Trawl's default).")
    var compressed = false
}
