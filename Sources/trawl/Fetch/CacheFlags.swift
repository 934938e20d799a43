import ArgumentParser
import TrawlJobs

/// `trawl fetch`'s conditional-request flags, over a job file's `settings.cache` and `on_not_modified`.
struct CacheFlags: ParsableArguments {
    @Option(
        name: .customLong("cache"),
        help: """
            Conditional requests: remember each page's ETag / Last-Modified and body in DIR (private to this \
            job), send If-None-Match / If-Modified-Since, and reuse the stored page on 304.
            """)
    var cache: String?

    @Option(
        name: .customLong("on-not-modified"),
        help: "write (default: a page answered 304 writes its stored items again) or skip (it writes none).")
    var onNotModified: String?

    func validate() throws {
        if let onNotModified, !["write", "skip"].contains(onNotModified) {
            throw ValidationError("--on-not-modified '\(onNotModified)' is not write or skip")
        }
        if cache?.isEmpty == true { throw ValidationError("--cache needs a directory") }
    }

    func apply(to settings: inout JobSettings) {
        if let cache { settings.cache = cache }
        if let onNotModified { settings.skipNotModified = onNotModified == "skip" }
    }
}
