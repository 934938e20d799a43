import Foundation
import TrawlEngine
import TrawlTestServer

#if canImport(Glibc)
    import Glibc
#endif

/// nginx on loopback with a certificate from a private CA that the test makes with openssl (nothing on the system
/// trusts it), for the CLI's TLS flags: `port` answers any client (HTTP/2 offered), `mutualPort` only clients
/// with a certificate from the same CA, `port + 2` cleartext HTTP/2 (h2c) only. Each echoes the protocol and the
/// client's certificate subject as JSON:
/// `{"items":[…],"protocol":"HTTP/2.0","client":"CN=trawl-client"}`.
final class PrivateCAServer {
    let directory: URL
    let port: Int
    let mutualPort: Int
    private let process: ChildProcess

    /// The CA certificate (PEM), the client certificate and its key.
    var caFile: String { path("ca.pem") }
    var clientCertificate: String { path("client.pem") }
    var clientKey: String { path("client.key") }
    /// A second CA that signed nothing here: trusting it alone must fail.
    var otherCAFile: String { path("other-ca.pem") }

    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    /// Cleartext HTTP/2 only (h2c, prior knowledge): an HTTP/1.1 request gets no HTTP/1.1 answer.
    func cleartextHTTP2URL(_ path: String = "/items") -> String { "http://127.0.0.1:\(port + 2)\(path)" }
    func url(_ path: String = "/items", mutual: Bool = false) -> String {
        "https://127.0.0.1:\(mutual ? mutualPort : port)\(path)"
    }

    init() async throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("trawl-ca-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try await Self.makeCertificates(in: directory)
        let dir = directory.path
        var started: (Int, Int, ChildProcess)?
        for attempt in 0..<5 where started == nil {
            let port = 20_000 + Int.random(in: 0..<30_000) + attempt
            let mutualPort = port + 1
            let body = #"{"items":[1,2,3],"protocol":"$server_protocol","client":"$ssl_client_s_dn"}"#
            let config = """
                daemon off;
                worker_processes 1;
                pid \(dir)/nginx.pid;
                error_log \(dir)/error.log warn;
                events { worker_connections 64; }
                http {
                    access_log off;
                    client_body_temp_path \(dir); proxy_temp_path \(dir); fastcgi_temp_path \(dir);
                    uwsgi_temp_path \(dir); scgi_temp_path \(dir);
                    ssl_certificate \(dir)/server.pem;
                    ssl_certificate_key \(dir)/server.key;
                    server {
                        listen 127.0.0.1:\(port) ssl http2;
                        location / { default_type application/json; return 200 '\(body)'; }
                        \(Self.pagedLocations(port: port))
                    }
                    server {
                        listen 127.0.0.1:\(port + 2) http2;
                        location / { default_type application/json; return 200 '\(body)'; }
                    }
                    server {
                        listen 127.0.0.1:\(mutualPort) ssl;
                        ssl_client_certificate \(dir)/ca.pem;
                        ssl_verify_client on;
                        location / { default_type application/json; return 200 '\(body)'; }
                    }
                }
                """
            let configPath = directory.appendingPathComponent("nginx.conf").path
            try config.write(toFile: configPath, atomically: true, encoding: .utf8)
            let process = try ChildProcess("/usr/sbin/nginx", ["-c", configPath, "-p", dir])
            var probe = Client.Configuration()
            probe.tls = Client.TLSOptions(caFile: "\(dir)/ca.pem")
            probe.logger.logLevel = .error
            let client = Client(configuration: probe)
            for _ in 0..<100 where process.isRunning {
                if (try? await client.send(Request(url: "https://127.0.0.1:\(port)/ready"))) != nil {
                    started = (port, mutualPort, process)
                    break
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            if started == nil, process.isRunning { process.terminate() }
        }
        guard let started else { throw CATestError.failed("nginx did not start") }
        port = started.0
        mutualPort = started.1
        process = started.2
    }

    /// `/missing`: a 404 with a JSON body; `/page/1` to `/page/3`: a Link walk of five items (`next` links);
    /// `/page/down`: two items and a next link to an `http://` page.
    private static func pagedLocations(port: Int) -> String {
        let json = "default_type application/json;"
        func next(_ page: Int) -> String {
            "add_header Link '<https://127.0.0.1:\(port)/page/\(page)>; rel=\"next\"';"
        }
        return [
            "location = /missing { \(json) return 404 '{\"error\":\"no such page\"}'; }",
            "location = /page/1 { \(json) \(next(2)) return 200 '{\"items\":[1,2]}'; }",
            "location = /page/2 { \(json) \(next(3)) return 200 '{\"items\":[3,4]}'; }",
            "location = /page/3 { \(json) return 200 '{\"items\":[5]}'; }",
            // A page whose next link leaves https for http (the h2c port): refused.
            "location = /page/down { \(json) add_header Link '<http://127.0.0.1:\(port + 2)/page/2>; rel=\"next\"'; "
                + "return 200 '{\"items\":[1,2]}'; }",
        ].joined(separator: "\n")
    }

    func stop() async {
        process.terminate()
        for _ in 0..<500 where process.isRunning { try? await Task.sleep(for: .milliseconds(10)) }
        try? FileManager.default.removeItem(at: directory)
    }

    /// A CA, a server certificate for 127.0.0.1 and localhost, a client certificate (all EC P-256: fast to make),
    /// a second unrelated CA, and `certs/`, the CA hashed for `--capath`.
    private static func makeCertificates(in directory: URL) async throws {
        let dir = directory.path
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try await openssl(["req", "-x509"] + key + [
            "-keyout", "\(dir)/ca.key", "-out", "\(dir)/ca.pem", "-days", "2", "-subj", "/CN=Trawl Test CA"])
        try await openssl(["req", "-x509"] + key + [
            "-keyout", "\(dir)/other-ca.key", "-out", "\(dir)/other-ca.pem", "-days", "2", "-subj", "/CN=Other CA"])
        for (name, subject) in [("server", "/CN=localhost"), ("client", "/CN=trawl-client")] {
            try await openssl(["req"] + key + [
                "-keyout", "\(dir)/\(name).key", "-out", "\(dir)/\(name).csr", "-subj", subject])
            var sign = [
                "x509", "-req", "-in", "\(dir)/\(name).csr", "-CA", "\(dir)/ca.pem", "-CAkey", "\(dir)/ca.key",
                "-CAcreateserial", "-out", "\(dir)/\(name).pem", "-days", "2",
            ]
            if name == "server" {
                try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(
                    toFile: "\(dir)/san.ext", atomically: true, encoding: .utf8)
                sign += ["-extfile", "\(dir)/san.ext"]
            }
            try await openssl(sign)
        }
        try FileManager.default.createDirectory(atPath: "\(dir)/certs", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: "\(dir)/ca.pem", toPath: "\(dir)/certs/ca.pem")
        try await openssl(["rehash", "\(dir)/certs"])
    }

    private static func openssl(_ arguments: [String]) async throws {
        let process = try ChildProcess("/usr/bin/openssl", arguments)
        for _ in 0..<2000 where process.isRunning { try await Task.sleep(for: .milliseconds(10)) }
        guard !process.isRunning, process.exitStatus == 0 else {
            process.terminate(SIGKILL)
            throw CATestError.failed("openssl \(arguments.joined(separator: " "))")
        }
    }
}

enum CATestError: Error { case failed(String) }

/// Runs `body` with a fresh private-CA nginx and a workspace, stopping both after, whatever happens.
func withPrivateCAServer(_ body: (PrivateCAServer, Workspace) async throws -> Void) async throws {
    let server = try await PrivateCAServer()
    let workspace = try Workspace()
    do {
        try await body(server, workspace)
    } catch {
        await server.stop()
        workspace.remove()
        throw error
    }
    await server.stop()
    workspace.remove()
}
