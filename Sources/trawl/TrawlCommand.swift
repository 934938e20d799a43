import ArgumentParser
import Foundation

/// The `trawl` command line: bulk-fetch paginated JSON APIs, stream large responses, measure throughput.
@main
struct TrawlCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trawl",
        abstract: "Bulk-fetch paginated JSON APIs, stream large responses, and measure throughput.",
        discussion: """
            trawl --version (or trawl version) prints trawl's version and the libcurl, yajl and zlib it runs with.
            """,
        subcommands: [
            Demo.self,
            Fetch.self,
            Get.self,
            Extract.self,
            Bench.self,
            Serve.self,
            StateCommand.self,
            Report.self,
            Plan.self,
            VersionCommand.self,
        ]
    )

    /// Exit status contract: 0 success, 1 the work failed (message on stderr), 2 bad usage, 23 the output could
    /// not be written (curl's code: stdout closed early, disk full); bench adds 3 (a threshold failed) and 130
    /// (stopped by Ctrl-C).
    static func main() async {
        do {
            let arguments = try CurlArguments.commandLine(
                VersionCommand.arguments(Array(CommandLine.arguments.dropFirst())),
                environment: ProcessInfo.processInfo.environment)
            var command = try parseAsRoot(arguments)
            CLIHints.install(command: type(of: command)._commandName)
            do {
                if var asyncCommand = command as? AsyncParsableCommand {
                    try await asyncCommand.run()
                } else {
                    try command.run()
                }
            } catch let error as ValidationError {
                // Thrown by run(), after parsing: ArgumentParser would show the root's usage, not the command's.
                throw RunUsageError(error, command: type(of: command))
            }
        } catch let failure as CurlExitFailure {
            // `trawl get`: the message is printed already; the status is curl's for the same failure.
            Foundation.exit(failure.code)
        } catch let unknown as CurlArguments.Unknown {
            let usage = "Usage: \(usageString(for: Get.self))\n  See 'trawl get --help' for more information.\n"
            FileHandle.standardError.write(Data(TerminalText.safe("Error: \(unknown)\n" + usage).utf8))
            Foundation.exit(2)
        } catch let failure as CLIFailure {
            FileHandle.standardError.write(Data((TerminalText.safe(failure.description) + "\n").utf8))
            Foundation.exit(1)
        } catch let exit as ExitCode {
            // An exit status chosen by the command (bench: 3 for a failed threshold, 130 after Ctrl-C).
            Foundation.exit(exit == .validationFailure ? 2 : exit.rawValue)
        } catch let usage as RunUsageError {
            FileHandle.standardError.write(Data(TerminalText.safe(usage.text).utf8))
            Foundation.exit(2)
        } catch let failure as OutputWriteFailure {
            FileHandle.standardError.write(Data(TerminalText.safe("trawl: \(failure.description)\n").utf8))
            Foundation.exit(OutputWriteFailure.exitStatus)
        } catch {
            if let text = FileErrorText.describe(error) {
                FileHandle.standardError.write(Data(TerminalText.safe("error: \(text)\n").utf8))
                Foundation.exit(1)
            }
            let code = exitCode(for: error)
            guard code != .success else { exit(withError: error) }
            FileHandle.standardError.write(Data((TerminalText.safe(fullMessage(for: error)) + "\n").utf8))
            Foundation.exit(code == .validationFailure ? 2 : 1)
        }
    }
}
