#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// A child process for tests and tools (the `trawl` binary, nginx, openssl), started with `posix_spawn`.
///
/// Foundation's `Process.run()` in Swift 6.3.1 on Linux crashes now and then while it lists `/proc/self/fd`
/// (a 256-byte over-read of each `dirent`, swift-corelibs-foundation#5472): a test process with many sockets open
/// hit it about once in a few full runs. This spawns directly and polls with `waitpid(WNOHANG)`, so nothing
/// blocks a thread of the cooperative pool.
///
/// ```swift
/// let child = try ChildProcess("/usr/bin/openssl", ["version"], stdout: "/tmp/version.txt")
/// while child.isRunning { try await Task.sleep(for: .milliseconds(10)) }
/// print(child.exitStatus)   // 0
/// ```
public final class ChildProcess: Sendable {
    public struct SpawnError: Error, CustomStringConvertible {
        public let description: String
    }

    public let pid: pid_t
    /// The raw wait status, once the child has been reaped.
    private let status = Mutex<Int32?>(nil)

    /// Starts `executable` with `arguments`.
    ///
    /// - Parameters:
    ///   - environment: the child's whole environment (`nil`: this process's).
    ///   - directory: the working directory (the child runs through `/bin/sh -c 'cd … && exec …'`).
    ///   - stdout, stderr: files to write to (created or truncated); `nil` is `/dev/null`. Standard input is
    ///     `/dev/null`.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil,
        stdout: String? = nil, stderr: String? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let output = O_WRONLY | O_CREAT | O_TRUNC
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout ?? "/dev/null", stdout == nil ? O_WRONLY : output, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, stderr ?? "/dev/null", stderr == nil ? O_WRONLY : output, 0o644)
        // Nothing else is inherited: a child holding a copy of a test server's listening socket would keep its
        // port accepting connections after the server closed it (a "refused" port would hang instead).
        try Self.closeInherited(&actions)

        // Signals as a fresh process has them: the spawning thread may block some (libdispatch's workers block
        // most), and a blocked mask or an ignored disposition would be inherited across exec: an openssl server
        // that never saw SIGTERM outlived every test run.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var path = executable
        var argv = [executable] + arguments
        if let directory {
            path = "/bin/sh"
            argv = ["/bin/sh", "-c", "cd -- \"$0\" && exec \"$@\"", directory, executable] + arguments
        }
        let argumentPointers = argv.map { strdup($0) } + [nil]
        defer { for pointer in argumentPointers { free(pointer) } }
        let environmentPointers = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for pointer in environmentPointers ?? [] { free(pointer) } }

        var pid = pid_t()
        let result = argumentPointers.withUnsafeBufferPointer { argvBuffer -> Int32 in
            guard let argv = argvBuffer.baseAddress else { return EINVAL }
            guard let environmentPointers else { return posix_spawn(&pid, path, &actions, &attributes, argv, environ) }
            return environmentPointers.withUnsafeBufferPointer { envBuffer -> Int32 in
                guard let envp = envBuffer.baseAddress else { return EINVAL }
                return posix_spawn(&pid, path, &actions, &attributes, argv, envp)
            }
        }
        guard result == 0 else {
            throw SpawnError(description: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        self.pid = pid
    }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+; a GNU extension Swift does not import), looked
    /// up once.
    private static let closeFrom: CloseFrom? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()

    private static func closeInherited(_ actions: inout posix_spawn_file_actions_t) throws {
        guard let closeFrom, closeFrom(&actions, 3) == 0 else {
            throw SpawnError(description: "posix_spawn_file_actions_addclosefrom_np is missing (glibc 2.34 or later)")
        }
    }

    /// Whether the child is still running (reaps it when it has ended).
    public var isRunning: Bool { waitStatus == nil }

    /// Sends `signal` (SIGTERM by default) unless the child has already been reaped.
    public func terminate(_ signal: Int32 = SIGTERM) {
        status.withLock { status in
            if status == nil { _ = kill(pid, signal) }
        }
    }

    /// The exit code, or the number of the signal that ended the child; 0 while it runs.
    public var exitStatus: Int32 {
        guard let status = waitStatus else { return 0 }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
    }

    /// Whether a signal ended the child.
    public var wasSignaled: Bool {
        guard let status = waitStatus else { return false }
        let signal = status & 0x7f
        return signal != 0 && signal != 0x7f
    }

    private var waitStatus: Int32? {
        status.withLock { status in
            if status == nil {
                var raw: Int32 = 0
                if waitpid(pid, &raw, WNOHANG) == pid { status = raw }
            }
            return status
        }
    }
}
