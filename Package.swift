// swift-tools-version: 6.2
// No package dependencies: SwiftPM cannot fetch here, and everything we need ships with the
// toolchain or comes from the system (libcurl, OpenSSL, libdeflate) through system-library
// targets.
import PackageDescription

let package = Package(
    name: "cloudbackup",
    products: [
        .library(name: "BackupKit", targets: ["BackupKit"]),
        .executable(name: "cloudbackup", targets: ["cloudbackup"]),
    ],
    targets: [
        // Two jobs at once on threads of their own (the reader's, the merge's and the
        // envelope's halves): Foundation and pthreads only.
        .target(name: "Parallel"),
        // Pure: Foundation only, no C, no I/O beyond what a caller hands it.
        .target(name: "BackupKit", dependencies: ["Parallel"]),

        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]
        ),

        // Atomic writes, size-capped reads and the profile lock, shared by OAuth's token
        // store and the CLI.
        .target(name: "LocalFiles"),
        // SHA-256 and MD5 from OpenSSL, for PKCE, the merge log and Drive's md5Checksum.
        .target(name: "Digests", dependencies: ["COpenSSL"]),
        // age v1 encryption of the backup's bytes, so BackupKit stays free of C.
        .target(name: "Envelope", dependencies: ["COpenSSL", "Parallel"]),
        // Reading gzip with libdeflate, so BackupKit stays free of C.
        .target(name: "Gzip", dependencies: ["CDeflate"]),
        .target(name: "Networking", dependencies: ["CCurl"]),
        .target(name: "OAuth", dependencies: ["Networking", "COpenSSL", "Digests", "LocalFiles"]),
        .target(name: "GoogleDrive", dependencies: ["Networking", "Digests"]),
        // The backup and restore protocol over Drive, as pure state machines and their driver.
        .target(
            name: "BackupSync", dependencies: ["BackupKit", "GoogleDrive", "Digests", "Gzip"]),
        .target(
            name: "CloudBackupCLI",
            dependencies: [
                "BackupKit", "BackupSync", "Digests", "Envelope", "Gzip", "LocalFiles",
                "Networking", "OAuth", "GoogleDrive", "Parallel",
            ]
        ),
        .executableTarget(name: "cloudbackup", dependencies: ["CloudBackupCLI"]),

        // A generator whose sequence its seed fixes, for the property tests and `make bench`'s
        // documents: a target of its own so the benchmark binary links no test support.
        .target(name: "SeededRandom"),
        // `make bench`: seeded document pairs and the timed runs, with Foundation as a peer.
        .target(name: "BenchDocuments", dependencies: ["BackupKit", "SeededRandom"]),
        // glibc's malloc.h, which the Glibc module leaves out (no library to link: it is libc).
        .systemLibrary(name: "CMalloc"),
        .executableTarget(
            name: "backup-bench",
            dependencies: [
                "BenchDocuments", "BackupKit", "Envelope", "Gzip", "LocalFiles", "CMalloc",
                "Parallel",
            ]),

        .target(
            name: "TestSupport", dependencies: ["Networking", "GoogleDrive"],
            path: "Tests/TestSupport"),
        .testTarget(
            name: "BackupKitTests", dependencies: ["BackupKit", "SeededRandom", "TestSupport"],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "EnvelopeTests",
            dependencies: ["Envelope", "Digests", "SeededRandom", "TestSupport"]),
        .testTarget(name: "DigestsTests", dependencies: ["Digests", "TestSupport"]),
        .testTarget(name: "GzipTests", dependencies: ["Gzip", "TestSupport"]),
        .testTarget(name: "ParallelTests", dependencies: ["Parallel"]),
        .testTarget(name: "LocalFilesTests", dependencies: ["LocalFiles", "TestSupport"]),
        .testTarget(name: "NetworkingTests", dependencies: ["Networking", "TestSupport"]),
        .testTarget(name: "OAuthTests", dependencies: ["OAuth", "TestSupport"]),
        // OAuth: a real TokenProvider under DriveClient's token refresh.
        .testTarget(
            name: "GoogleDriveTests", dependencies: ["GoogleDrive", "OAuth", "TestSupport"]),
        .testTarget(
            name: "BackupSyncTests",
            dependencies: [
                "BackupSync", "BackupKit", "GoogleDrive", "Digests", "Gzip", "Networking",
                "TestSupport",
            ]),
        .testTarget(
            name: "BenchDocumentsTests",
            dependencies: ["BenchDocuments", "BackupKit", "TestSupport"]
        ),
        .testTarget(
            name: "CloudBackupCLITests",
            dependencies: [
                "CloudBackupCLI", "BackupKit", "BackupSync", "Digests", "SeededRandom",
                "TestSupport",
            ],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The build is clean, and stays so: a warning in Sources fails every build of them, debug and
// release alike (the tests' own targets are left out). For a package that depends on ours,
// SwiftPM applies warning settings to the root package only.
for target in package.targets where [.regular, .executable].contains(target.type) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.treatAllWarnings(as: .error)]
}
