//! Checks the declarations of this crate against include/fstitch.h, both read as text:
//! every FST_API function is declared with the same parameter names in the same order and
//! the same void-ness of its result, every enum and every `FST_` macro has a constant with
//! the same value, every opaque handle and enum type has its Rust name, and the crate
//! declares nothing the header lacks. The parsers accept only the forms the two files use
//! and fail loudly on anything else, so a header change cannot slip past them.

use std::collections::BTreeMap;
use std::path::PathBuf;

fn read(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn header() -> String {
    read("../../../include/fstitch.h")
}

fn rust_source() -> String {
    read("src/lib.rs")
}

/// A function declaration: parameter names in order, and whether it returns void.
#[derive(Debug, PartialEq)]
struct Function {
    params: Vec<String>,
    returns_void: bool,
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn last_ident(text: &str) -> &str {
    let text = text.trim_end();
    let start = text
        .char_indices()
        .rev()
        .find(|&(_, c)| !is_ident_char(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    &text[start..]
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn parse_integer(text: &str) -> Option<i128> {
    let text = text.trim();
    let text = text
        .strip_prefix("UINT64_C(")
        .and_then(|rest| rest.strip_suffix(')'))
        .unwrap_or(text)
        .trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest.trim()),
        None => (false, text),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return None;
    }
    let value: i128 = digits.replace('_', "").parse().ok()?;
    Some(if negative { -value } else { value })
}

// ---------------------------------------------------------------------------------------
// The C header

struct Header {
    functions: BTreeMap<String, Function>,
    /// Enumerators and `FST_` macros; None for a macro whose value is not a literal.
    constants: BTreeMap<String, Option<i128>>,
    enum_types: Vec<String>,
    opaque_types: Vec<String>,
}

fn strip_c_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let block = rest.find("/*");
        let line = rest.find("//");
        match (block, line) {
            (Some(b), l) if l.map_or(true, |l| b < l) => {
                out.push_str(&rest[..b]);
                let end = rest[b + 2..]
                    .find("*/")
                    .expect("unterminated comment in fstitch.h");
                out.push(' ');
                rest = &rest[b + 2 + end + 2..];
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |end| &rest[l + end..]);
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

fn parse_header(text: &str) -> Header {
    let text = strip_c_comments(text);
    let mut constants = BTreeMap::new();
    let mut code = String::new();
    for line in text.lines() {
        let trimmed = line.trim_start();
        if let Some(directive) = trimmed.strip_prefix('#') {
            let words: Vec<&str> = directive.split_whitespace().collect();
            if words.first() == Some(&"define") && words.len() >= 2 {
                let name = words[1];
                if name.starts_with("FST_") && name != "FST_API" {
                    let value = words[2..].join(" ");
                    constants.insert(name.to_string(), parse_integer(&value));
                }
            }
            continue;
        }
        code.push_str(line);
        code.push('\n');
    }

    let functions = parse_c_functions(&code);
    let expected = code.matches("FST_API").count();
    assert_eq!(
        functions.len(),
        expected,
        "every FST_API declaration parses"
    );

    let mut enum_types = Vec::new();
    let mut rest = code.as_str();
    while let Some(start) = rest.find("typedef enum") {
        let open = start + rest[start..].find('{').expect("enum body");
        let close = open + rest[open..].find('}').expect("enum end");
        let semicolon = close + rest[close..].find(';').expect("enum typedef end");
        let type_name = rest[close + 1..semicolon].trim().to_string();
        for enumerator in rest[open + 1..close].split(',') {
            let enumerator = collapse_whitespace(enumerator);
            if enumerator.is_empty() {
                continue;
            }
            let (name, value) = enumerator
                .split_once('=')
                .unwrap_or_else(|| panic!("{type_name}: enumerator without a value: {enumerator}"));
            let value = parse_integer(value)
                .unwrap_or_else(|| panic!("{type_name}: value is not an integer: {enumerator}"));
            let previous = constants.insert(name.trim().to_string(), Some(value));
            assert!(previous.is_none(), "{name} defined twice");
        }
        enum_types.push(type_name);
        rest = &rest[semicolon..];
    }

    let mut opaque_types = Vec::new();
    let mut rest = code.as_str();
    while let Some(start) = rest.find("typedef struct") {
        let end = start + rest[start..].find(';').expect("struct typedef end");
        let words: Vec<&str> = rest[start..end].split_whitespace().collect();
        assert!(
            words.len() == 4 && words[2] == words[3],
            "only `typedef struct X X;` is expected, got {:?}",
            words
        );
        opaque_types.push(words[3].to_string());
        rest = &rest[end..];
    }

    Header {
        functions,
        constants,
        enum_types,
        opaque_types,
    }
}

fn parse_c_functions(code: &str) -> BTreeMap<String, Function> {
    let mut functions = BTreeMap::new();
    for declaration in code.split("FST_API").skip(1) {
        let declaration = &declaration[..declaration.find(';').expect("declaration end")];
        let open = declaration.find('(').expect("parameter list");
        let close = declaration.rfind(')').expect("parameter list end");
        let name = last_ident(&declaration[..open]).to_string();
        let return_type = collapse_whitespace(&declaration[..open - name.len()]);
        let params_text = collapse_whitespace(&declaration[open + 1..close]);
        assert!(
            !params_text.contains('('),
            "{name}: a function-pointer parameter needs a typedef for this checker"
        );
        let params = if params_text == "void" {
            Vec::new()
        } else {
            params_text
                .split(',')
                .map(|param| {
                    let param = param.trim();
                    let param = param.find('[').map_or(param, |bracket| &param[..bracket]);
                    let ident = last_ident(param);
                    assert!(
                        !ident.is_empty() && param.trim() != ident,
                        "{name}: parameter without a name: {param}"
                    );
                    ident.to_string()
                })
                .collect()
        };
        let function = Function {
            params,
            returns_void: return_type == "void",
        };
        assert!(
            functions.insert(name.clone(), function).is_none(),
            "{name} declared twice"
        );
    }
    functions
}

// ---------------------------------------------------------------------------------------
// The Rust source

struct RustDecls {
    functions: BTreeMap<String, Function>,
    /// `pub const` items; None for a value that is an expression.
    constants: BTreeMap<String, Option<i128>>,
    type_aliases: BTreeMap<String, String>,
    opaque_types: Vec<String>,
}

fn strip_rust_line_comments(text: &str) -> String {
    text.lines()
        .map(|line| line.find("//").map_or(line, |i| &line[..i]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn parse_rust(text: &str) -> RustDecls {
    let code = strip_rust_line_comments(text);

    let block_start = code.find("extern \"C\" {").expect("an extern \"C\" block");
    assert_eq!(
        code.matches("extern \"C\" {").count(),
        1,
        "one extern \"C\" block"
    );
    let body_start = block_start + "extern \"C\" {".len();
    let body_end = body_start + code[body_start..].find('}').expect("extern block end");
    let mut functions = BTreeMap::new();
    for item in code[body_start..body_end].split(';') {
        let item = collapse_whitespace(item);
        if item.is_empty() {
            continue;
        }
        let signature = item
            .strip_prefix("pub fn ")
            .unwrap_or_else(|| panic!("unexpected item in the extern block: {item}"));
        let open = signature.find('(').expect("parameter list");
        let close = signature.rfind(')').expect("parameter list end");
        let name = signature[..open].trim().to_string();
        let params_text = &signature[open + 1..close];
        assert!(
            !params_text.contains('('),
            "{name}: use a type alias for function-pointer parameters"
        );
        let params = params_text
            .split(',')
            .map(str::trim)
            .filter(|param| !param.is_empty())
            .map(|param| {
                let (ident, _) = param
                    .split_once(':')
                    .unwrap_or_else(|| panic!("{name}: parameter without a name: {param}"));
                ident.trim().to_string()
            })
            .collect();
        let tail = signature[close + 1..].trim();
        let function = Function {
            params,
            returns_void: tail.is_empty(),
        };
        assert!(
            functions.insert(name.clone(), function).is_none(),
            "{name} declared twice"
        );
    }

    let mut constants = BTreeMap::new();
    let mut type_aliases = BTreeMap::new();
    let mut opaque_types = Vec::new();
    let outside = format!("{}{}", &code[..block_start], &code[body_end + 1..]);
    for statement in outside.split(';') {
        let statement = collapse_whitespace(statement);
        let statement = statement
            .rfind("pub const ")
            .or_else(|| statement.rfind("pub type "))
            .map_or("", |i| &statement[i..]);
        if let Some(constant) = statement.strip_prefix("pub const ") {
            let (name, rest) = constant.split_once(':').expect("const type");
            let (_, value) = rest.split_once('=').expect("const value");
            let previous = constants.insert(name.trim().to_string(), parse_integer(value));
            assert!(previous.is_none(), "{name} defined twice");
        } else if let Some(alias) = statement.strip_prefix("pub type ") {
            let (name, target) = alias.split_once('=').expect("type alias target");
            type_aliases.insert(name.trim().to_string(), target.trim().to_string());
        }
    }
    let mut rest = outside.as_str();
    while let Some(start) = rest.find("opaque_handle!(") {
        let end = start + rest[start..].find(");").expect("opaque_handle! end");
        opaque_types.push(last_ident(&rest[start..end]).to_string());
        rest = &rest[end..];
    }

    RustDecls {
        functions,
        constants,
        type_aliases,
        opaque_types,
    }
}

// ---------------------------------------------------------------------------------------
// The checks

#[test]
fn every_function_is_declared_with_the_same_parameters() {
    let header = parse_header(&header());
    let rust = parse_rust(&rust_source());
    assert!(
        header.functions.len() >= 78,
        "the header parser found the API"
    );
    for (name, c_function) in &header.functions {
        let rust_function = rust
            .functions
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not declared in fstitch-sys"));
        assert_eq!(
            rust_function.params, c_function.params,
            "{name}: parameters differ from fstitch.h"
        );
        assert_eq!(
            rust_function.returns_void, c_function.returns_void,
            "{name}: void-ness of the result differs from fstitch.h"
        );
    }
    for name in rust.functions.keys() {
        assert!(
            header.functions.contains_key(name),
            "{name} is declared in fstitch-sys but not in fstitch.h"
        );
    }
}

#[test]
fn every_constant_has_the_same_value() {
    let header = parse_header(&header());
    let rust = parse_rust(&rust_source());
    assert!(
        header.constants.len() > 60,
        "the header parser found the enums"
    );
    for (name, c_value) in &header.constants {
        let rust_value = rust
            .constants
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not defined in fstitch-sys"));
        if let Some(c_value) = c_value {
            assert_eq!(
                rust_value.as_ref(),
                Some(c_value),
                "{name}: value differs from fstitch.h"
            );
        }
    }
    for name in rust.constants.keys() {
        assert!(
            header.constants.contains_key(name),
            "{name} is defined in fstitch-sys but not in fstitch.h"
        );
    }
}

#[test]
fn every_type_has_its_rust_name() {
    let header_text = header();
    let header = parse_header(&header_text);
    let rust = parse_rust(&rust_source());
    assert_eq!(
        header.enum_types.len(),
        header_text.matches("typedef enum").count(),
        "the header parser found every enum"
    );
    for name in &header.enum_types {
        assert_eq!(
            rust.type_aliases.get(name).map(String::as_str),
            Some("c_int"),
            "{name} must be a c_int alias (C enums are int-sized)"
        );
    }
    let mut c_opaque = header.opaque_types.clone();
    let mut rust_opaque = rust.opaque_types.clone();
    c_opaque.sort();
    rust_opaque.sort();
    assert_eq!(rust_opaque, c_opaque, "opaque handle types");
    assert_eq!(
        rust.type_aliases.get("fst_value").map(String::as_str),
        Some("u64")
    );
    assert!(rust.type_aliases.contains_key("fst_log_callback"));
    assert!(rust.type_aliases.contains_key("fst_opaque_callback"));
}

#[test]
fn the_checker_rejects_a_mismatch() {
    let header = parse_header(&header());
    let source = rust_source();
    let swapped = source.replacen(
        "graph: *const fst_graph,\n        value: fst_value,\n        out_dtype",
        "value: fst_value,\n        graph: *const fst_graph,\n        out_dtype",
        1,
    );
    assert_ne!(swapped, source, "the test edit applies");
    let rust = parse_rust(&swapped);
    assert_ne!(
        rust.functions["fst_value_dtype"],
        header.functions["fst_value_dtype"]
    );
    let renumbered = source.replacen(
        "FST_ERROR_SHAPE: fst_status = 2;",
        "FST_ERROR_SHAPE: fst_status = 3;",
        1,
    );
    assert_ne!(renumbered, source, "the test edit applies");
    assert_ne!(
        parse_rust(&renumbered).constants["FST_ERROR_SHAPE"],
        header.constants["FST_ERROR_SHAPE"]
    );
}
