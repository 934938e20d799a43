import Foundation

extension Origin {
    /// `scheme://host:port`, the unit of per-host limits and pauses (and the report's and the metrics' host).
    /// Every page asks: an http(s) URL whose host is letters, digits, dots and hyphens is read by the engine's
    /// byte parser, which lowercases scheme and host (one host however it is written); others (IPv6 literals,
    /// percent-encoded hosts) go through `URLComponents`.
    package static func hostKey(of url: String) -> String {
        if let origin = Self(url: url), origin.scheme == "http" || origin.scheme == "https", !origin.host.isEmpty,
            origin.host.utf8.allSatisfy({ byte in
                (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2E || byte == 0x2D
            })
        {
            return origin.description
        }
        guard let components = URLComponents(string: url), let host = components.host else { return url }
        let scheme = components.scheme ?? "http"
        let port = components.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }
}
