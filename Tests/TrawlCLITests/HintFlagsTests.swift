import Foundation
import Testing
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

    @Test("each command's hint rewrites name flags of that command")
    func rewritesNameTheCommandsFlags() async throws {
        for command in ["get", "fetch", "extract", "bench"] {
            let flags = try await Self.helpFlags(command)
            for entry in CLIHints.replacements where entry.command == command || entry.command == nil {
                for flag in Self.flags(in: entry.cli) where !flags.contains(flag) && !entry.cli.contains("trawl get") {
                    Issue.record("the hint for \(command) names \(flag), which trawl \(command) does not have")
                }
            }
        }
    }

    @Test("no library setting named in the engine's hints reaches a CLI user")
    func libraryNamesAreRewritten() throws {
        let library = /\b(TLSOptions|Timeouts|RedirectPolicy|HTTPVersionPreference|Request|Configuration)\.[a-zA-Z]/
        let hints = try ["TrawlEngine", "TrawlJSON", "Trawl", "TrawlJobs"].flatMap { try Self.literals(in: $0) }
            .filter { $0.text.contains(library) }
        #expect(hints.count >= 5)
        for (file, hint) in hints {
            for command in ["get", "fetch", "extract", "bench"] {
                let shown = CLIHints.rewrite(hint, command: command)
                #expect(!shown.contains(library), "\(file): trawl \(command) would print '\(shown)'")
            }
        }
    }
}
