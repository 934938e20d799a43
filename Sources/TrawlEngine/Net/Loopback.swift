#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What "loopback" means wherever Trawl relaxes a rule for it (an OAuth2 token URL over plain `http`): an IP literal
/// in `127.0.0.0/8`, `::1`, or the name `localhost` — never a DNS name that merely starts with `127.`
/// (`127.0.0.1.nip.example` resolves wherever its owner likes).
///
/// ```swift
/// Loopback.isLoopback("127.0.0.1")              // true
/// Loopback.isLoopback("[::1]")                  // true
/// Loopback.isLoopback("127.0.0.1.nip.example")  // false
/// ```
public enum Loopback {
    /// Whether `host` (a URL's host, brackets allowed around an IPv6 literal) is a loopback address or `localhost`.
    public static func isLoopback(_ host: String) -> Bool {
        var bare = Substring(host)
        if bare.hasPrefix("["), bare.hasSuffix("]") { bare = bare.dropFirst().dropLast() }
        let text = String(bare)
        if text.lowercased() == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            return UInt32(bigEndian: v4.s_addr) >> 24 == 127
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in bytes.dropLast().allSatisfy { $0 == 0 } && bytes.last == 1 }
        }
        return false
    }
}
