//! The text form of graphs: print, parse, and the errors of malformed text.

mod common;

use common::host_context;
use fstitch::{DType, Graph, Status};

#[test]
fn printed_text_parses_back_to_the_same_graph() {
    let context = host_context();
    let graph = Graph::new(&context).unwrap();
    let x = graph.input("x", DType::BF16, &[2, 8]);
    let w = graph.input("w", DType::BF16, &[8]);
    let y = (x.cast(DType::F32) * w.cast(DType::F32)).gelu_tanh();
    graph
        .output("y", y.sum(&[1], true).cast(DType::BF16))
        .unwrap();
    graph.output("x_again", x).unwrap();
    let text = graph.to_text().unwrap();
    assert!(text.contains("bf16"), "{text}");

    let parsed = Graph::parse(&context, &text).unwrap();
    assert_eq!(parsed.to_text().unwrap(), text);
    assert_eq!(parsed.inputs().unwrap(), graph.inputs().unwrap());
    assert_eq!(parsed.outputs().unwrap(), graph.outputs().unwrap());
    assert_eq!(parsed.value_count().unwrap(), graph.value_count().unwrap());
    parsed.verify().unwrap();
    assert_eq!(graph.outputs().unwrap()[0].dims, vec![2, 1]);
    assert_eq!(graph.inputs().unwrap()[1].name, "w");
}

#[test]
fn malformed_text_is_a_parse_error_with_line_and_column() {
    let context = host_context();
    let error = Graph::parse(&context, "this is not a graph\n").unwrap_err();
    assert_eq!(error.status(), Status::Parse);
    assert!(error.message().contains("line 1"), "{error}");
    assert!(error.message().contains("column"), "{error}");

    // A type error in valid syntax is reported with its own status.
    let graph = Graph::new(&context).unwrap();
    let a = graph.input("a", DType::F32, &[3]);
    graph.output("y", a.exp()).unwrap();
    let text = graph.to_text().unwrap();
    let broken = text.replacen("f32[3]", "i32[3]", 1);
    assert_ne!(broken, text);
    let error = Graph::parse(&context, &broken).unwrap_err();
    assert!(
        error.status() == Status::Dtype && error.message().contains("line"),
        "{error}\n{broken}"
    );
}
