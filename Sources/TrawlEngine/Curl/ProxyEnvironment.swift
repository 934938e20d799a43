import Foundation

/// The proxy libcurl takes from the environment for a URL, so that a failure to reach it is said of the proxy
/// ("the proxy http://proxy:3128 refused the connection"), not of the server, which was never tried.
enum ProxyEnvironment {
    /// The proxy for `url` as libcurl picks it: `http_proxy` for http (lowercase only, as libcurl reads it),
    /// `https_proxy`/`HTTPS_PROXY` for https, else `all_proxy`/`ALL_PROXY`; `nil` when `no_proxy` excludes the host.
    /// Userinfo is hidden: a proxy URL may carry credentials.
    static func proxy(for url: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let origin = Origin(url: url) else { return nil }
        let candidates = origin.scheme == "https"
            ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] : ["http_proxy", "all_proxy", "ALL_PROXY"]
        guard let proxy = candidates.lazy.compactMap({ environment[$0] }).first(where: { !$0.isEmpty }) else {
            return nil
        }
        let exclusions = (environment["no_proxy"] ?? environment["NO_PROXY"] ?? "").split(separator: ",")
        let host = origin.host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        for entry in exclusions.map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) where !entry.isEmpty {
            if entry == "*" { return nil }
            let suffix = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
            if host == suffix || host.hasSuffix("." + suffix) { return nil }
        }
        return hidingUserInfo(proxy)
    }

    private static func hidingUserInfo(_ proxy: String) -> String {
        let start = proxy.firstRange(of: "://")?.upperBound ?? proxy.startIndex
        let authorityEnd = proxy[start...].firstIndex(of: "/") ?? proxy.endIndex
        guard let at = proxy[start..<authorityEnd].lastIndex(of: "@") else { return proxy }
        return String(proxy[..<start]) + "REDACTED@" + String(proxy[proxy.index(after: at)...])
    }
}
