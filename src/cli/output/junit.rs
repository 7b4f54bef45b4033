//! `--output-format junit`: a JUnit XML report, ruff's layout: one test suite per file, one
//! failed test case `org.staticfx.FX101` per finding with its line and column; a clean run is
//! one passing case, so CI dashboards show the check ran.

use std::path::Path;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite, XmlString};

use super::super::check::Message;

pub fn render(ms: &[Message]) -> String {
    let mut report = Report::new("staticfx");
    if ms.is_empty() {
        let mut suite = TestSuite::new("staticfx");
        suite
            .extra
            .insert(XmlString::new("package"), XmlString::new("org.staticfx"));
        let mut case = TestCase::new("No errors found", TestCaseStatus::success());
        case.set_classname("staticfx");
        suite.add_test_case(case);
        report.add_test_suite(suite);
    }
    // `ms` is sorted by file: consecutive runs are one file's findings.
    for group in ms.chunk_by(|a, b| a.filename == b.filename) {
        let filename = &group[0].filename;
        let mut suite = TestSuite::new(filename.as_str());
        suite
            .extra
            .insert(XmlString::new("package"), XmlString::new("org.staticfx"));
        let path = Path::new(filename);
        let classname = path.with_extension("").to_string_lossy().replace('\\', "/");
        for m in group {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message(m.message.as_str());
            status.set_description(format!("line {}, col {}, {}", m.row, m.column, m.message));
            let mut case = TestCase::new(format!("org.staticfx.{}", m.code), status);
            case.set_classname(classname.as_str());
            case.extra
                .insert(XmlString::new("line"), XmlString::new(m.row.to_string()));
            case.extra.insert(
                XmlString::new("column"),
                XmlString::new(m.column.to_string()),
            );
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report.to_string().expect("a JUnit report serializes")
}
