import TrawlEngine

/// curl's exit codes for the conditions `trawl get` meets, so that a script's `case $?` keeps working.
/// `fetch` and `bench` keep their own (0, 1, 2, 3, 23).
enum CurlExit {
    static let unsupportedProtocol: Int32 = 1
    static let malformedURL: Int32 = 3
    static let httpError: Int32 = 22
    static let writeError: Int32 = 23
    static let readError: Int32 = 26

    /// The exit code curl gives for the same failure: libcurl's own code when it reported one (it is curl's exit
    /// code), else the code of the condition Trawl found itself.
    static func code(for error: TrawlError) -> Int32 {
        // 23 and 42 are libcurl reporting that Trawl's own callback stopped the transfer (a bad head, a body over
        // its limit): the condition, not the callback, decides.
        if let curl = error.curlCode, curl > 0, curl < 100, curl != 23, curl != 42 { return Int32(curl) }
        switch error.code {
        case .invalidURL, .invalidRequest: return malformedURL
        case .unsupportedScheme: return unsupportedProtocol
        case .dnsFailed: return 6
        case .connectFailed: return 7
        case .tlsFailed: return 35
        case .timeout, .stalled: return 28
        case .truncated: return 18
        case .receiveFailed: return 56
        case .sendFailed: return 55
        case .tooManyRedirects, .redirectLoop: return 47
        case .decodingFailed: return 61
        case .tooLarge: return 63
        case .bodySourceFailed: return readError
        case .invalidHeader: return 43
        case .unexpectedStatus: return httpError
        default: return 1
        }
    }

    /// Whether `--retry` tries again after this failure (curl: a timeout, and with `--retry-connrefused` a
    /// refused connection; `--retry-all-errors`: any).
    static func isTransient(_ code: Int32, connectionRefused: Bool, all: Bool) -> Bool {
        if all { return code != 0 }
        return code == 28 || (connectionRefused && code == 7)
    }

    /// HTTP statuses curl retries: 408, 429, 500, 502, 503, 504.
    static func isTransient(status: Int) -> Bool {
        [408, 429, 500, 502, 503, 504].contains(status)
    }
}
