import Foundation

/// The library's hints name library settings (`TLSOptions.caFile`, `Timeouts.total`); a CLI user can set only
/// flags. Every message the CLI prints passes through here, which names the flag of the command that ran.
enum CLIHints {
    /// (library phrase, the same advice in CLI terms), per command; `nil` applies to every command.
    static let replacements: [(command: String?, library: String, cli: String)] = [
        (nil, "the CA bundle (TLSOptions.caFile)", "the CA it trusts: --cacert FILE or --capath DIR"),
        (nil, "raise Timeouts.connect", "raise --connect-timeout"),
        (nil, "retry, or raise Timeouts.stall", "retry"),
        ("get", "use HTTPVersionPreference.http2PriorKnowledge", "pass --http2-prior-knowledge"),
        ("fetch", "use HTTPVersionPreference.http2PriorKnowledge",
         "pass --http2-prior-knowledge (settings.http: \"2-prior-knowledge\")"),
        ("extract", "use HTTPVersionPreference.http2PriorKnowledge", "fetch it with trawl get --http2-prior-knowledge"),
        ("bench", "use HTTPVersionPreference.http2PriorKnowledge", "check the URL"),
        ("get", "raise RedirectPolicy.follow(max:)", "raise --max-redirs"),
        ("get", "raise Timeouts.total, or stream the body", "raise --max-time"),
        ("extract", "raise Timeouts.total, or stream the body", "retry"),
        ("fetch", "raise Timeouts.total, or stream the body", "raise --timeout"),
        ("fetch", "raise RedirectPolicy.follow(max:) or fix", "fix"),
        ("extract", "raise RedirectPolicy.follow(max:) or fix", "fix"),
        ("fetch", "raise Request.maxBodySize (or the client's maxBodySize), or stream the body",
         "raise --max-page-bytes or ask for smaller pages"),
        ("bench", "raise Timeouts.total, or stream the body", "retry"),
        ("get", "fix Client.Configuration.defaultHeaders", "fix the -H headers"),
    ]

    /// `text` with each library hint of `command` (`get`, `fetch`, …) said in CLI terms.
    static func rewrite(_ text: String, command: String) -> String {
        var result = text
        for entry in replacements where entry.command == nil || entry.command == command {
            result = result.replacingOccurrences(of: entry.library, with: entry.cli)
        }
        return result
    }
}
