import TrawlEngine

/// The clients of a job run: one per distinct TLS configuration of its units (a source's `tls:` may trust another
/// CA or present a client certificate), all sized by the job's settings. A client given in the run's options
/// serves every unit.
struct JobClients: Sendable {
    let shared: Client
    private let byTLS: [Client.TLSOptions: Client]

    init(units: [WorkUnit], settings: JobSettings, options: JobRunOptions) {
        if let client = options.client {
            shared = client
            byTLS = [:]
            return
        }
        var base = Client.Configuration()
        base.maxConcurrentTransfers = max(settings.concurrency, 1)
        base.maxConnectionsPerHost = max(settings.perHost, 1)
        base.timeouts.total = settings.timeout
        if let connect = settings.connectTimeout { base.timeouts.connect = connect }
        base.maxBodySize = options.maxPageBytes
        base.httpVersion = settings.http ?? .http2
        var clients: [Client.TLSOptions: Client] = [:]
        var warned = false
        for tls in Set(units.map(\.tls)).sorted(by: { $0.verifyPeer && !$1.verifyPeer }) {
            var configuration = base
            configuration.tls = tls
            // The engine warns once per insecure client; one line says it for the whole job.
            if !tls.verifyPeer {
                if warned { configuration.logger.logLevel = .error }
                warned = true
            }
            clients[tls] = Client(configuration: configuration)
        }
        byTLS = clients
        shared = units.first.flatMap { clients[$0.tls] } ?? Client(configuration: base)
    }

    func client(for unit: WorkUnit) -> Client { byTLS[unit.tls] ?? shared }
}
