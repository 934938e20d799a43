import Foundation

/// The library's hints name library settings (`TLSOptions.caFile`, `Timeouts.total`); a CLI user can set only
/// flags. Every message the CLI prints passes through here, which names the flag of the command that ran.
enum CLIHints {
    /// (command, library phrase, the same advice in CLI terms), most specific first: an entry for the command
    /// that ran applies before an entry for every command (`nil`).
    static let replacements: [(command: String?, library: String, cli: String)] = [
        ("get", "raise RedirectPolicy.follow(max:)", "raise --max-redirs"),
        ("get", "set Client.Configuration.proxyCredentials", "pass --proxy-user USER:PASSWORD"),
        (nil, "set Client.Configuration.proxyCredentials", "put them in the proxy variable's URL"),
        ("get", "Client.Configuration.proxy", "-x"),
        (nil, "Client.Configuration.proxy", "the proxy variable (http_proxy, https_proxy)"),
        ("get", "raise Timeouts.total, or stream the body", "raise --max-time"),
        ("fetch", "raise Timeouts.total, or stream the body", "raise --timeout"),
        ("fetch", "raise Request.maxBodySize (or the client's maxBodySize), or stream the body",
         "raise --max-page-bytes or ask for smaller pages"),
        ("get", "use HTTPVersionPreference.http2PriorKnowledge", "pass --http2-prior-knowledge"),
        ("fetch", "use HTTPVersionPreference.http2PriorKnowledge",
         "pass --http2-prior-knowledge (settings.http: \"2-prior-knowledge\")"),
        ("extract", "use HTTPVersionPreference.http2PriorKnowledge", "fetch it with trawl get --http2-prior-knowledge"),
        (nil, "the CA bundle (TLSOptions.caFile)", "the CA it trusts: --cacert FILE or --capath DIR"),
        (nil, "raise Timeouts.connect", "raise --connect-timeout"),
        (nil, "retry, or raise Timeouts.stall", "retry"),
        (nil, "raise Timeouts.total, or stream the body", "retry"),
        (nil, "raise RedirectPolicy.follow(max:) or fix", "fix"),
        (nil, "raise Request.maxBodySize (or the client's maxBodySize), or stream the body", "ask for a smaller body"),
        (nil, "if it speaks only HTTP/2 over plain http, use HTTPVersionPreference.http2PriorKnowledge",
         "check the URL's scheme and port"),
        (nil, "fix Client.Configuration.defaultHeaders", "fix the -H headers"),
        (nil, "raise Client.Configuration.maxDecompressionRatio if the body is known to be this repetitive, or "
            + "request it uncompressed", "request it uncompressed (-H 'Accept-Encoding: identity')"),
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
