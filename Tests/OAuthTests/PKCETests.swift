import Testing

@testable import OAuth

@Suite struct PKCETests {
    /// RFC 7636 appendix B: these octets, this verifier, this S256 challenge.
    @Test func rfc7636AppendixBVector() throws {
        let octets: [UInt8] = [
            116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37,
            77,
            105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121,
        ]
        let verifier = PKCE.verifier(fromOctets: octets)
        #expect(verifier == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        let pkce = try PKCE(verifier: verifier)
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test func randomVerifiersAre43URLSafeCharactersAndDiffer() throws {
        let first = try PKCE.random()
        let second = try PKCE.random()
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        #expect(first.verifier.count == 43)
        #expect(first.verifier.allSatisfy { allowed.contains($0) })
        #expect(first.verifier != second.verifier)
        #expect(first.challenge.count == 43)
        #expect(try LoginState.random() != LoginState.random())
    }

    @Test(arguments: [
        ([UInt8](), ""), ([0x66], "Zg"), ([0x66, 0x6F], "Zm8"), ([0x66, 0x6F, 0x6F], "Zm9v"),
        ([0xFB, 0xFF], "-_8"),
    ])
    func base64URLWithoutPadding(bytes: [UInt8], expected: String) {
        #expect(Base64URL.encode(bytes) == expected)
    }
}
