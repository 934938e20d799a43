/// Where `trawl fetch` serves its Prometheus metrics (`--metrics-listen`, `settings.metrics_listen`): a numeric
/// IP address (no name is looked up) and a port; `PORT` alone is 127.0.0.1.
///
/// ```swift
/// let address = try MetricsAddress.parse("[::1]:9464")   // host ::1, port 9464
/// ```
public struct MetricsAddress: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.port = port
    }

    public var description: String { "\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    /// Parses `IP:PORT`, `[IPv6]:PORT` or `PORT`.
    public static func parse(_ text: String) throws(JobSpecError) -> MetricsAddress {
        let usage = "give IP:PORT such as 127.0.0.1:9464, [::1]:9464 or 0.0.0.0:9464 (every interface), or PORT alone"
        let host: String
        let portText: Substring
        if let colon = text.lastIndex(of: ":") {
            var name = text[..<colon]
            if name.hasPrefix("[") && name.hasSuffix("]") { name = name.dropFirst().dropLast() }
            host = String(name)
            portText = text[text.index(after: colon)...]
        } else {
            (host, portText) = ("127.0.0.1", Substring(text))
        }
        guard !portText.isEmpty, portText.allSatisfy(\.isASCII), let port = Int(portText), (0...65535).contains(port)
        else {
            throw JobSpecError("'\(text)' has no port number from 0 to 65535", hint: usage)
        }
        guard isIPv4(host) || isIPv6(host) else {
            throw JobSpecError("'\(text)' has no numeric IP address (a name is not looked up)", hint: usage)
        }
        return MetricsAddress(host: host, port: port)
    }

    private static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { part in
            (1...3).contains(part.count) && part.allSatisfy { $0.isASCII && $0.isNumber }
                && (Int(part).map { $0 <= 255 } ?? false)
        }
    }

    private static func isIPv6(_ text: String) -> Bool {
        text.contains(":") && text.count <= 45
            && text.allSatisfy { $0.isASCII && ($0.isHexDigit || $0 == ":" || $0 == ".") }
    }
}
