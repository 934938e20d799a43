import Foundation
import Testing
import TrawlEngine
import TrawlTestSupport

@testable import trawl

/// Hints are advice a user can follow: every flag a message names exists, and no library setting
/// (`TLSOptions.caFile`, `Timeouts.total`) reaches a CLI user.
@Suite("CLI hints name flags that exist", .endToEnd)
struct HintFlagsTests {
    static let commands = ["demo", "fetch", "get", "extract", "bench", "serve", "report", "plan"]
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// `--flag` words in `text`.
    static func flags(in text: String) -> Set<String> {
        let pattern = /--[a-z][a-z0-9.-]*[a-z0-9]/
        return Set(text.matches(of: pattern).map { String($0.output) })
    }

    /// The flags `trawl COMMAND --help` lists.
    static func helpFlags(_ command: String) async throws -> Set<String> {
        let result = try await trawl([command, "--help"])
        return flags(in: result.stdout)
    }

    /// The string literals of every Swift file under `Sources/MODULE`, comments left out.
    static func literals(in module: String) throws -> [(file: String, text: String)] {
        let directory = sources.appendingPathComponent(module)
        let files = try FileManager.default.subpathsOfDirectory(atPath: directory.path)
        var result: [(String, String)] = []
        for file in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                for match in line.matches(of: /"((?:[^"\\]|\\.)*)"/) { result.append((file, String(match.output.1))) }
            }
        }
        return result
    }

    @Test("every flag named anywhere in the sources' strings is a flag of some command")
    func namedFlagsExist() async throws {
        var known: Set<String> = []
        for command in Self.commands { known.formUnion(try await Self.helpFlags(command)) }
        // The root's own flags (`--version`), from `trawl --help`.
        known.formUnion(Self.flags(in: try await trawl(["--help"]).stdout))
        #expect(known.contains("--cacert"))
        #expect(known.contains("--version"))
        for module in ["trawl", "TrawlJobs", "TrawlEngine", "Trawl", "TrawlJSON"] {
            for (file, text) in try Self.literals(in: module) {
                for flag in Self.flags(in: text) where !known.contains(flag) {
                    Issue.record("\(module)/\(file) names \(flag), which no command has: \(text)")
                }
            }
        }
    }

    @Test("each command words every remedy with flags of that command")
    func remediesNameTheCommandsFlags() async throws {
        for command in ["get", "fetch", "extract", "bench"] {
            let flags = try await Self.helpFlags(command)
            for remedy in TrawlError.Remedy.allCases {
                let text = CLIHints.text(remedy, command: command)
                for flag in Self.flags(in: text) where !flags.contains(flag) && !text.contains("trawl get") {
                    Issue.record("\(remedy) for \(command) names \(flag), which trawl \(command) does not have")
                }
            }
        }
    }

    /// A setting of the library by its type's name (`Timeouts.total`).
    static var library: Regex<(Substring, Substring)> {
        // Simple word boundaries: Unicode's do not break "Client.Configuration" before "Configuration".
        /\b(TLSOptions|Timeouts|RedirectPolicy|HTTPVersionPreference|Request|Configuration)\.[a-zA-Z]/
            .wordBoundaryKind(.simple)
    }

    @Test("no library setting reaches a CLI user: advice that names one is a remedy code the CLI words")
    func libraryNamesAreWordedByTheCLI() throws {
        // Every string of the library layers that names one of their settings is a remedy's library wording, in
        // one file; the CLI never rewrites text.
        let named = try ["TrawlEngine", "TrawlJSON", "Trawl", "TrawlJobs"].flatMap { try Self.literals(in: $0) }
            .filter { $0.text.contains(Self.library) }
        #expect(named.count >= TrawlError.Remedy.allCases.count)
        for (file, text) in named where file != "TrawlError+Remedy.swift" {
            Issue.record("\(file) names a library setting outside a remedy: \(text)")
        }
        for remedy in TrawlError.Remedy.allCases {
            #expect(remedy.libraryAdvice.contains(Self.library), "\(remedy) names the library's setting")
            for command in ["get", "fetch", "extract", "bench", "demo", "serve"] {
                let shown = CLIHints.text(remedy, command: command)
                #expect(!shown.contains(Self.library), "trawl \(command) would print '\(shown)' for \(remedy)")
            }
        }
    }

    @Test("an engine error prints the remedy as the command words it, and as the library does otherwise")
    func errorsWordTheirRemedyAsInstalled() {
        let error = TrawlError(
            code: .timeout, message: "the transfer did not finish", remedy: .totalTimeout, method: "GET",
            url: "http://127.0.0.1:9/")
        #expect(error.hint == TrawlError.Remedy.totalTimeout.libraryAdvice)
        #expect(error.described(remedies: nil).hasSuffix(". raise Timeouts.total, or stream the body"))
        let get = error.described(remedies: { CLIHints.text($0, command: "get") })
        #expect(get.hasSuffix(". raise --max-time"), "\(get)")
        let fetch = error.described(remedies: { CLIHints.text($0, command: "fetch") })
        #expect(fetch.hasSuffix(". raise --timeout"), "\(fetch)")
    }
}
