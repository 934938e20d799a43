import TrawlEngine

/// The engine's advice comes as codes (`TrawlError.Remedy`) that the library words with its own settings
/// (`TLSOptions.caFile`, `Timeouts.total`); a CLI user can set only flags. `install(command:)` words every remedy
/// with the flags of the command that runs, before it starts.
enum CLIHints {
    /// The remedy in the terms of `trawl COMMAND` (`get`, `fetch`, …).
    static func text(_ remedy: TrawlError.Remedy, command: String) -> String {
        switch (remedy, command) {
        case (.redirectLimit, "get"): "raise --max-redirs or fix the redirect chain on the server"
        case (.redirectLimit, _): "fix the redirect chain on the server"
        case (.totalTimeout, "get"): "raise --max-time"
        case (.totalTimeout, "fetch"): "raise --timeout"
        case (.totalTimeout, _): "retry"
        case (.connectTimeout, _): "check that the host is reachable, or raise --connect-timeout"
        case (.stallTimeout, _): "the server stopped sending; retry"
        case (.bodyLimit, "fetch"): "raise --max-page-bytes or ask for smaller pages"
        case (.bodyLimit, _): "ask for a smaller body"
        case (.decompressionRatio, _): "request it uncompressed (-H 'Accept-Encoding: identity')"
        case (.http2PriorKnowledge, "get"): "if it speaks only HTTP/2 over plain http, pass --http2-prior-knowledge"
        case (.http2PriorKnowledge, "fetch"):
            "if it speaks only HTTP/2 over plain http, pass --http2-prior-knowledge "
                + "(settings.http: \"2-prior-knowledge\")"
        case (.http2PriorKnowledge, "extract"):
            "if it speaks only HTTP/2 over plain http, fetch it with trawl get --http2-prior-knowledge"
        case (.http2PriorKnowledge, _): "check the URL's scheme and port"
        case (.caBundle, _): "check the server's certificate and the CA it trusts: --cacert FILE or --capath DIR"
        case (.defaultHeaders, _): "fix the -H headers"
        case (.proxyUnreachable, "get"): "check that the proxy is up and -x names it"
        case (.proxyUnreachable, _): "check that the proxy is up and its address is right"
        case (.proxyAddress, "get"): "check the host name in -x"
        case (.proxyAddress, _): "check the proxy's host name"
        case (.proxyCredentials, "get"): "the proxy wants credentials: pass --proxy-user USER:PASSWORD"
        case (.proxyCredentials, _): "the proxy wants credentials"
        default: remedy.libraryAdvice
        }
    }

    /// Words every remedy the engine reports in this process with `command`'s flags.
    static func install(command: String) {
        TrawlError.wordRemedies { text($0, command: command) }
    }
}
