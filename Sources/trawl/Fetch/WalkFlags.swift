import ArgumentParser
import TrawlJobs

/// `trawl fetch`'s flags about where a walk's credentials may go and how a walk ends, on top of a job file's
/// `settings` (`trusted_origins`, `sensitive_headers`, `stop_on_status`).
struct WalkFlags: ParsableArguments {
    @Option(
        name: .customLong("trusted-origin"),
        help: """
            An origin (https://host[:port]) that may receive the credentials when a page's next link or URL names \
            it (repeatable). Any other origin gets those pages without Authorization, Cookie and sensitive headers.
            """)
    var trustedOrigins: [String] = []

    @Option(
        name: .customLong("sensitive-header"),
        help: "A header that carries a credential (repeatable): stripped across origins and redacted, like Authorization.")
    var sensitiveHeaders: [String] = []

    @Option(
        name: .customLong("stop-on-status"),
        help: "A status that ends a walk cleanly after its first page (repeatable), e.g. 404 past DRF's last page.")
    var stopStatuses: [Int] = []

    @Flag(
        name: .customLong("allow-short"),
        help: """
            Exit 0 though a unit ends with fewer items than the server announced (a total in the body or in a \
            header such as X-Total-Count); without it that run exits 1, the items kept (job file: allow_short).
            """)
    var allowShort = false

    @Flag(
        name: .customLong("allow-drift"),
        help: """
            Exit 0 though a walk with --primary-key drifted (keys repeated or missing) and a re-read did not \
            settle it: each key is written once, its last answer kept (job file: allow_drift).
            """)
    var allowDrift = false

    func validate() throws {
        for origin in trustedOrigins where !(origin.hasPrefix("https://") || origin.hasPrefix("http://")) {
            throw ValidationError("--trusted-origin '\(origin)' is not an http:// or https:// origin")
        }
        try HeaderOption.validateSensitive(sensitiveHeaders)
        for status in stopStatuses where !(100...599).contains(status) {
            throw ValidationError("--stop-on-status \(status) is not an HTTP status (100-599)")
        }
    }

    /// The job's settings with these flags added.
    func apply(to settings: inout JobSettings) {
        settings.trustedOrigins += trustedOrigins
        settings.sensitiveHeaders.formUnion(sensitiveHeaders.map { $0.lowercased() })
        settings.stopStatuses.formUnion(stopStatuses)
        if allowShort { settings.allowShort = true }
        if allowDrift { settings.allowDrift = true }
    }
}
