import TrawlEngine

/// A job's `tls:` mapping (in `settings` and per source): only what it gives, so a source's `tls:` overrides the
/// settings key by key and command-line flags override both.
///
/// ```yaml
/// settings:
///   tls: {ca_file: /etc/internal/ca.pem}
/// sources:
///   - name: billing
///     url: https://billing.internal/items
///     tls: {cert: client.pem, key: client.key}     # mutual TLS; ca_file still from settings
/// ```
public struct TLSSettings: Sendable, Hashable {
    public var caFile: String?
    public var caPath: String?
    public var clientCertificate: String?
    public var clientKey: String?
    public var insecure: Bool?

    public init(
        caFile: String? = nil, caPath: String? = nil, clientCertificate: String? = nil, clientKey: String? = nil,
        insecure: Bool? = nil
    ) {
        self.caFile = caFile
        self.caPath = caPath
        self.clientCertificate = clientCertificate
        self.clientKey = clientKey
        self.insecure = insecure
    }

    /// The keys of a job file's `tls:` mapping.
    public static let keys = ["ca_file", "ca_path", "cert", "key", "insecure"]

    /// These settings with `other`'s given values on top. A CA file or directory given by `other` replaces both
    /// of ours (trust is chosen as a whole), and so does a client certificate with its key.
    public func overlaid(with other: TLSSettings) -> TLSSettings {
        var result = self
        if other.caFile != nil || other.caPath != nil {
            result.caFile = other.caFile
            result.caPath = other.caPath
        }
        if other.clientCertificate != nil {
            result.clientCertificate = other.clientCertificate
            result.clientKey = other.clientKey
        } else if let key = other.clientKey {
            result.clientKey = key
        }
        if let insecure = other.insecure { result.insecure = insecure }
        return result
    }

    /// curl's rule for its environment variables: when neither a CA file nor a CA directory is given,
    /// `CURL_CA_BUNDLE` names the CA file; without it, `SSL_CERT_DIR` names the directory and `SSL_CERT_FILE` the
    /// file. Empty values count as unset.
    public func withCurlEnvironment(_ environment: [String: String]) -> TLSSettings {
        guard caFile == nil, caPath == nil else { return self }
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        var result = self
        if let bundle = value("CURL_CA_BUNDLE") {
            result.caFile = bundle
        } else {
            result.caPath = value("SSL_CERT_DIR")
            result.caFile = value("SSL_CERT_FILE")
        }
        return result
    }

    /// The engine's options for these settings.
    public var options: Client.TLSOptions {
        Client.TLSOptions(
            verifyPeer: !(insecure ?? false), caFile: caFile, caPath: caPath, clientCertificate: clientCertificate,
            clientKey: clientKey)
    }
}
