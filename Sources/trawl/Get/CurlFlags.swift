import ArgumentParser

/// The flags a curl user types without thinking, spelled and meaning what they mean in curl 7.88.
struct CurlFlags: ParsableArguments {
    @Flag(name: [.customShort("S"), .customLong("show-error")], help: "With -s: still print the error message.")
    var showError = false

    @Flag(name: [.customShort("f"), .customLong("fail")], help: "An HTTP status of 400 or more: no body, exit 22.")
    var fail = false

    @Flag(name: .customLong("fail-with-body"), help: "An HTTP status of 400 or more: the body, then exit 22.")
    var failWithBody = false

    @Flag(name: [.customShort("I"), .customLong("head")], help: "Send HEAD and print the response head.")
    var head = false

    @Flag(
        name: [.customShort("v"), .customLong("verbose")],
        help: "Request and response heads on stderr (credentials shown as <redacted>).")
    var verbose = false

    @Flag(
        name: [.customShort("O"), .customLong("remote-name")],
        help: "Write the body to a file named as the URL's last path segment (in --output-dir).")
    var remoteName = false

    @Flag(
        name: [.customShort("J"), .customLong("remote-header-name")],
        help: "With -O: the name from Content-Disposition, reduced to a plain file name.")
    var remoteHeaderName = false

    @Option(name: .customLong("output-dir"), help: "The directory -o and -O write into.")
    var outputDir: String?

    @Flag(name: .customLong("create-dirs"), help: "Create the directories -o or --output-dir name.")
    var createDirs = false

    @Flag(name: .customLong("no-clobber"), help: "Never overwrite a file: write NAME.1, NAME.2… instead.")
    var noClobber = false

    @Flag(name: .customLong("remove-on-error"), help: "Remove the output file when the transfer fails.")
    var removeOnError = false

    @Option(name: [.customShort("x"), .customLong("proxy")], help: "Use this proxy ([scheme://]HOST[:PORT]).")
    var proxy: String?

    @Option(name: [.customShort("U"), .customLong("proxy-user")], help: "USER:PASSWORD for the proxy.")
    var proxyUser: String?

    @Option(name: .customLong("noproxy"), help: "Hosts reached without the proxy (comma-separated, * for all).")
    var noProxy: String?

    @Option(name: [.customShort("A"), .customLong("user-agent")], help: "The User-Agent header.")
    var userAgent: String?

    @Option(name: [.customShort("e"), .customLong("referer")], help: "The Referer header.")
    var referer: String?

    @Option(
        name: [.customShort("b"), .customLong("cookie")],
        help: "Cookies 'NAME=VALUE; …', or a file of them (Netscape format or Set-Cookie lines).")
    var cookies: [String] = []

    @Option(name: [.customShort("c"), .customLong("cookie-jar")], help: "Write the cookies received to FILE.")
    var cookieJar: String?

    @Option(name: .customLong("retry"), help: "Retry a transient failure up to N times.")
    var retry: Int = 0

    @Option(name: .customLong("retry-delay"), help: "Seconds between retries (default: 1, doubling).")
    var retryDelay: Double?

    @Option(name: .customLong("retry-max-time"), help: "Retry only within this many seconds.")
    var retryMaxTime: Double?

    @Flag(name: .customLong("retry-all-errors"), help: "With --retry: retry on any error.")
    var retryAllErrors = false

    @Flag(name: .customLong("retry-connrefused"), help: "With --retry: a refused connection is transient too.")
    var retryConnectionRefused = false

    @Option(
        name: [.customShort("w"), .customLong("write-out")],
        help: "Print this after the transfer: %{http_code}, %{size_download}, %header{name}, \\n…; @FILE reads it.")
    var writeOut: String?

    @Option(name: .customLong("etag-save"), help: "Save the response's ETag in FILE.")
    var etagSave: String?

    @Option(name: .customLong("etag-compare"), help: "Send If-None-Match with the ETag saved in FILE.")
    var etagCompare: String?

    @Option(name: .customLong("url-query"), help: "Add to the query: 'name=value' (value encoded), '+raw'.")
    var urlQuery: [String] = []

    @Flag(name: [.customShort("Z"), .customLong("parallel")], help: "Fetch the URLs at the same time.")
    var parallel = false

    @Option(name: .customLong("parallel-max"), help: "With -Z: at most N at once (default 50).")
    var parallelMax: Int = 50

    @Option(name: [.customShort("K"), .customLong("config")], help: "Read options from FILE (curlrc syntax).")
    var config: [String] = []

    @Flag(name: [.customShort("q"), .customLong("disable")], help: "As the first option: do not read ~/.curlrc.")
    var disable = false
}
