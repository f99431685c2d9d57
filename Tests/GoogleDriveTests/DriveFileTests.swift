import Foundation
import GoogleDrive
import Testing

@Test(arguments: [
    (#"{"id":"a","name":"n","size":"42","version":"7"}"#, Int?.some(42), Int?.some(7)),
    (#"{"id":"a","name":"n","size":42}"#, 42, nil),
    (#"{"id":"a","title":"n","fileSize":"5"}"#, 5, nil),
])
func driveFileReadsInt64FieldsAsStrings(json: String, size: Int?, version: Int?) throws {
    let file = try JSONDecoder().decode(DriveFile.self, from: Data(json.utf8))
    #expect(file.name == "n")
    #expect(file.size == size)
    #expect(file.version == version)
}

@Test func aSizeThatIsNotANumberIsRefused() {
    #expect(throws: DecodingError.self) {
        try JSONDecoder().decode(
            DriveFile.self, from: Data(#"{"id":"a","name":"n","size":"big"}"#.utf8))
    }
}
