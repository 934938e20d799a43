import Foundation
import Testing
import TrawlTestSupport

/// `--cacert`, `--capath`, `-k`, `--cert`/`--key`, curl's CA variables and `tls:` in job files, against nginx with
/// a certificate from a private CA the test makes.
@Suite("CLI TLS", .endToEnd)
struct TLSCLITests {
    @Test("a private CA is refused by default, with a hint naming --cacert; --cacert and --capath trust it")
    func cacertAndCapath() async throws {
        try await withPrivateCAServer { server, workspace in
            let refused = try await trawl(["get", "-s", server.url()], in: workspace)
            #expect(refused.status == 60, "curl's code for an untrusted peer certificate")
            #expect(refused.stderr.contains("--cacert"))
            #expect(!refused.stderr.contains("TLSOptions"))

            let trusted = try await trawl(["get", "-s", "--cacert", server.caFile, server.url()], in: workspace)
            #expect(trusted.status == 0, "\(trusted.stderr)")
            #expect(trusted.stdout.contains(#""items":[1,2,3]"#))

            let directory = try await trawl(
                ["get", "-s", "--capath", server.path("certs"), server.url()], in: workspace)
            #expect(directory.status == 0, "\(directory.stderr)")

            let wrong = try await trawl(["get", "-s", "--cacert", server.otherCAFile, server.url()], in: workspace)
            #expect(wrong.status == 60)
        }
    }

    @Test("CURL_CA_BUNDLE, SSL_CERT_FILE and SSL_CERT_DIR are honoured as curl does; the flags win")
    func curlEnvironment() async throws {
        try await withPrivateCAServer { server, workspace in
            for (name, value) in [
                ("CURL_CA_BUNDLE", server.caFile), ("SSL_CERT_FILE", server.caFile),
                ("SSL_CERT_DIR", server.path("certs")),
            ] {
                let result = try await trawl(["get", "-s", server.url()], in: workspace, environment: [name: value])
                #expect(result.status == 0, "\(name): \(result.stderr)")
            }
            // CURL_CA_BUNDLE comes first: SSL_CERT_FILE is not read when it is set.
            let bundleFirst = try await trawl(
                ["get", "-s", server.url()], in: workspace,
                environment: ["CURL_CA_BUNDLE": server.otherCAFile, "SSL_CERT_FILE": server.caFile])
            #expect(bundleFirst.status == 60)
            // A flag replaces the variables.
            let flagWins = try await trawl(
                ["get", "-s", "--cacert", server.caFile, server.url()], in: workspace,
                environment: ["CURL_CA_BUNDLE": server.otherCAFile])
            #expect(flagWins.status == 0, "\(flagWins.stderr)")
            let flagWinsOver = try await trawl(
                ["get", "-s", "--cacert", server.otherCAFile, server.url()], in: workspace,
                environment: ["CURL_CA_BUNDLE": server.caFile])
            #expect(flagWinsOver.status == 60)
        }
    }

    /// `trawl get` with `SSL_CERT_DIR` once crashed in the allocator at exit: OpenSSL's atexit handler freed its
    /// state while the engine's loop thread was still closing the connection. The engine now asks OpenSSL not to
    /// register that handler; a preloaded shim reports the handler if it runs (`openssl version` is the control).
    @Test("the process exits without OpenSSL's exit handler freeing state a loop thread may still use")
    func exitLeavesTLSStateAlone() async throws {
        try await withPrivateCAServer { server, workspace in
            let shim = #"""
                #define _GNU_SOURCE
                #include <dlfcn.h>
                #include <stdio.h>
                void OPENSSL_cleanup(void) {
                    void (*real)(void) = (void (*)(void))dlsym(RTLD_NEXT, "OPENSSL_cleanup");
                    fputs("[OPENSSL_cleanup ran]\n", stderr);
                    if (real) real();
                }
                """#
            try workspace.write("shim.c", shim)
            let compile = try await shell(
                """
                for c in clang cc gcc /opt/swift/usr/bin/clang; do command -v "$c" >/dev/null && CC="$c" && break; done
                [ -n "${CC:-}" ] || { echo "no C compiler: clang is part of the Swift toolchain" >&2; exit 1; }
                "$CC" -shared -fPIC -o shim.so shim.c -ldl
                """, in: workspace)
            try #require(compile.status == 0, "\(compile.stderr)")
            let control = try await shell("LD_PRELOAD=./shim.so openssl version", in: workspace)
            #expect(control.stderr.contains("[OPENSSL_cleanup ran]"), "the shim sees OpenSSL's exit handler")

            let shimPath = workspace.directory.appendingPathComponent("shim.so").path
            for environment in [["SSL_CERT_DIR": server.path("certs")], ["CURL_CA_BUNDLE": server.caFile]] {
                var variables = environment
                variables["LD_PRELOAD"] = shimPath
                let result = try await trawl(["get", "-s", server.url()], in: workspace, environment: variables)
                #expect(result.status == 0, "\(environment): \(result.stderr)")
                #expect(!result.stderr.contains("[OPENSSL_cleanup ran]"), "\(environment)")
            }
        }
    }

    @Test("-k skips verification and says so in exactly one line on stderr")
    func insecureWarnsOnce() async throws {
        try await withPrivateCAServer { server, workspace in
            let result = try await trawl(["get", "-s", "-k", server.url()], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1)
            #expect(lines.first?.contains("--insecure") == true)

            let job = """
                settings: {tls: {insecure: true}}
                sources:
                  - {name: a, url: "\(server.url("/a"))", paginate: link, items: items}
                  - name: b
                    url: "\(server.url("/b"))"
                    paginate: link
                    items: items
                    tls: {cert: "\(server.clientCertificate)", key: "\(server.clientKey)"}
                """
            try workspace.write("job.yaml", job)
            let fetched = try await trawl(["fetch", "-q", "job.yaml", "--output-dir", "out"], in: workspace)
            #expect(fetched.status == 0, "\(fetched.stderr)")
            #expect(fetched.stderr.split(separator: "\n").filter { $0.contains("verification") }.count == 1)
        }
    }

    @Test("--cert and --key present a client certificate (mutual TLS)")
    func clientCertificate() async throws {
        try await withPrivateCAServer { server, workspace in
            let mutual = server.url(mutual: true)
            // nginx answers 400 to a client without a certificate: -f makes that exit 22, as in curl.
            let without = try await trawl(["get", "-sf", "--cacert", server.caFile, mutual], in: workspace)
            #expect(without.status == 22)
            let with = try await trawl(
                ["get", "-s", "--cacert", server.caFile, "--cert", server.clientCertificate, "--key", server.clientKey,
                 mutual], in: workspace)
            #expect(with.status == 0, "\(with.stderr)")
            #expect(with.stdout.contains("CN=trawl-client"))

            let missing = try await trawl(["get", "--cert", server.path("nope.pem"), mutual], in: workspace)
            #expect(missing.status == 2)
            #expect(missing.stderr.contains("--cert"))
        }
    }

    @Test("fetch, extract and bench take the TLS flags too")
    func otherCommands() async throws {
        try await withPrivateCAServer { server, workspace in
            let fetched = try await trawl(
                ["fetch", "-q", "--url", server.url(mutual: true), "--paginate", "link", "--items", "items",
                 "--cacert", server.caFile, "--cert", server.clientCertificate, "--key", server.clientKey,
                 "-o", "out.jsonl"], in: workspace)
            #expect(fetched.status == 0, "\(fetched.stderr)")
            #expect(workspace.text("out.jsonl") == "1\n2\n3\n")

            let extracted = try await trawl(
                ["extract", "--path", "items", "--cacert", server.caFile, server.url()], in: workspace)
            #expect(extracted.status == 0, "\(extracted.stderr)")
            #expect(extracted.stdout == "1\n2\n3\n")

            let benched = try await trawl(
                ["bench", "-n", "20", "-c", "2", "--json", "--cacert", server.caFile, server.url()], in: workspace)
            #expect(benched.status == 0, "\(benched.stderr)")
            let refused = try await trawl(["bench", "-n", "5", "-c", "1", "--json", server.url()], in: workspace)
            #expect(refused.status != 0 || refused.stdout.contains("\"errors\":5"))
        }
    }

    @Test("a job file's tls: in settings and per source; a missing file names its field")
    func jobFileTLS() async throws {
        try await withPrivateCAServer { server, workspace in
            let job = """
                settings:
                  tls: {ca_file: "\(server.caFile)"}
                sources:
                  - name: open
                    url: "\(server.url())"
                    paginate: link
                    items: items
                  - name: mutual
                    url: "\(server.url(mutual: true))"
                    paginate: link
                    items: items
                    tls: {cert: "\(server.clientCertificate)", key: "\(server.clientKey)"}
                """
            try workspace.write("job.yaml", job)
            let result = try await trawl(["fetch", "-q", "job.yaml", "--output-dir", "out"], in: workspace)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(workspace.text("out/mutual.jsonl") == "1\n2\n3\n")
            #expect(workspace.text("out/open.jsonl") == "1\n2\n3\n")

            try workspace.write("bad.yaml", job.replacingOccurrences(of: server.clientKey, with: "missing.key"))
            let bad = try await trawl(["fetch", "-q", "bad.yaml", "--output-dir", "out2"], in: workspace)
            #expect(bad.status != 0)
            #expect(bad.stderr.contains("sources[1].tls.key"))
        }
    }

    @Test("--http2 is offered over https by default, --http1.1 refuses it")
    func httpVersions() async throws {
        try await withPrivateCAServer { server, workspace in
            let byDefault = try await trawl(["get", "-s", "--cacert", server.caFile, server.url()], in: workspace)
            #expect(byDefault.stdout.contains("HTTP/2.0"), "\(byDefault.stdout)")
            let old = try await trawl(
                ["get", "-s", "--http1.1", "--cacert", server.caFile, server.url()], in: workspace)
            #expect(old.stdout.contains("HTTP/1.1"), "\(old.stdout)")
            for (flags, expected) in [([String](), "HTTP/2.0"), (["--http1.1"], "HTTP/1.1")] {
                let fetched = try await trawl(
                    ["fetch", "-q", "--url", server.url(), "--paginate", "link", "--items", "items", "--with-meta",
                     "--side", "protocol", "--cacert", server.caFile, "-o", "out.jsonl"] + flags, in: workspace)
                #expect(fetched.status == 0, "\(fetched.stderr)")
                #expect(workspace.text("out.jsonl").contains(#""protocol":"\#(expected)""#), "\(flags)")
            }
        }
    }

    @Test("--http2-prior-knowledge and settings.http: \"2-prior-knowledge\" speak h2c, also over many requests")
    func priorKnowledge() async throws {
        try await withPrivateCAServer { server, workspace in
            let got = try await trawl(
                ["get", "-s", "--http2-prior-knowledge", server.cleartextHTTP2URL()], in: workspace)
            #expect(got.status == 0, "\(got.stderr)")
            #expect(got.stdout.contains("HTTP/2.0"))
            let plain = try await trawl(["get", "-s", server.cleartextHTTP2URL()], in: workspace)
            #expect(plain.status == 1)
            #expect(plain.stderr.contains("--http2-prior-knowledge"), "\(plain.stderr)")

            // Several requests, one at a time, on one host: libcurl 7.88 breaks the second request on a reused h2c
            // connection, so this is what fails if each transfer does not get its own.
            let job = """
                settings: {http: "2-prior-knowledge", concurrency: 1, per_host: 1, attempts: 1}
                sources:
                  - name: s
                    url: "\(server.cleartextHTTP2URL("/x"))?n={n}"
                    paginate: link
                    items: items
                    matrix: {n: "1..5"}
                """
            try workspace.write("job.yaml", job)
            let fetched = try await trawl(["fetch", "-q", "job.yaml", "-o", "out.jsonl"], in: workspace)
            #expect(fetched.status == 0, "\(fetched.stderr)")
            #expect(workspace.text("out.jsonl").split(separator: "\n").count == 15)

            try workspace.write("bad.yaml", job.replacingOccurrences(of: "2-prior-knowledge", with: "3"))
            let bad = try await trawl(["fetch", "-q", "bad.yaml", "-o", "bad.jsonl"], in: workspace)
            #expect(bad.status != 0)
            #expect(bad.stderr.contains("settings.http"), "\(bad.stderr)")
        }
    }
}
