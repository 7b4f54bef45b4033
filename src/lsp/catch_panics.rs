//! A panic inside one request handler must not end the server. tower-lsp polls handler futures
//! inside its own serve loop, so a panic there unwinds through the loop and the process. This
//! wrapper catches it at the handler's future: the request gets an internal error, the panic
//! is logged to stderr, and the next request is served as usual.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

use tower_lsp_server::jsonrpc::{Error, Request, Response};
use tower_service::Service;

pub struct CatchPanics<S>(pub S);

/// Polls the inner future inside `catch_unwind`.
struct Guarded<F>(Pin<Box<F>>);

impl<F: Future> Future for Guarded<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(move || inner.poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(p) => Poll::Ready(Err(p)),
        }
    }
}

pub use crate::ide::stack::panic_message;

fn answer(
    method: &str,
    id: Option<tower_lsp_server::jsonrpc::Id>,
    p: &(dyn Any + Send),
) -> Option<Response> {
    let msg = format!(
        "staticfx: the {method} handler panicked: {} (this is a bug; please report it)",
        panic_message(p)
    );
    eprintln!("{msg}");
    id.map(|id| {
        let mut e = Error::internal_error();
        e.message = msg.into();
        Response::from_error(id, e)
    })
}

impl<S> Service<Request> for CatchPanics<S>
where
    S: Service<Request, Response = Option<Response>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
{
    type Response = Option<Response>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Option<Response>, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let id = req.id().cloned();
        let method = req.method().to_string();
        let inner = &mut self.0;
        match catch_unwind(AssertUnwindSafe(move || inner.call(req))) {
            Ok(fut) => Box::pin(async move {
                match Guarded(Box::pin(fut)).await {
                    Ok(r) => r,
                    Err(p) => Ok(answer(&method, id, &*p)),
                }
            }),
            Err(p) => {
                let r = answer(&method, id, &*p);
                Box::pin(async move { Ok(r) })
            }
        }
    }
}
