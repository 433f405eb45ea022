//! The README shows the example program verbatim.

#[test]
fn the_readme_example_is_the_example_file() {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(crate_dir.join("../README.md")).unwrap();
    let example = std::fs::read_to_string(crate_dir.join("examples/softmax.rs")).unwrap();
    let start = readme.find("```rust\n").expect("a rust block in README.md") + "```rust\n".len();
    let end = start + readme[start..].find("```").expect("the block ends");
    assert_eq!(&readme[start..end], example);
}
