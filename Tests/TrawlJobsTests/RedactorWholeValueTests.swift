import Testing
import TrawlTestSupport

@testable import TrawlJobs

/// Redaction by whole values (issue 35, point 7): a short value is hidden where it stands whole, never inside
/// other text; an OAuth2 client id is an identifier, not a secret.
@Suite("Redactor: whole values", .hangGuard)
struct RedactorWholeValueTests {
    @Test("a value under 8 characters is replaced only where it stands whole")
    func shortValues() {
        let redactor = Redactor(secrets: [("KEY", "a")])
        #expect(
            redactor.redact("GET https://example.com/page?key=a&x=1 failed: page 2")
                == "GET https://example.com/page?key=${KEY}&x=1 failed: page 2")
        #expect(redactor.redact("Authorization: a") == "Authorization: ${KEY}")
        #expect(redactor.redact("a") == "${KEY}")
        #expect(redactor.unredact(redactor.redact("https://example.com/page?key=a")) == "https://example.com/page?key=a")
        let digits = Redactor(secrets: [("N", "0")])
        #expect(digits.redact("http://127.0.0.1:8080/x?n=0") == "http://127.0.0.1:8080/x?n=${N}")
    }

    @Test("a value of 8 characters or more is replaced wherever it appears, as before")
    func longValues() {
        let redactor = Redactor(secrets: [("TOKEN", "s3cr3t-value")])
        #expect(redactor.redact("Bearer s3cr3t-value, xs3cr3t-valuex") == "Bearer ${TOKEN}, x${TOKEN}x")
    }

    @Test("auth: client_id and scope are identifiers; the client secret is a secret")
    func clientIDIsNoSecret() throws {
        let job = try Job.parse(
            """
            settings:
              auth:
                type: oauth2_client_credentials
                token_url: "https://auth.example.com/token"
                client_id: "${CLIENT_ID}"
                client_secret: "${CLIENT_SECRET}"
            sources:
              - {name: a, url: "https://api.example.com/a", items: "", paginate: link}
            """, file: "job.yaml", environment: ["CLIENT_ID": "a", "CLIENT_SECRET": "very-secret-1"])
        let redactor = job.redactor(environment: ["CLIENT_ID": "a", "CLIENT_SECRET": "very-secret-1"])
        #expect(redactor.redact("client a: very-secret-1") == "client a: ${CLIENT_SECRET}")
    }
}
