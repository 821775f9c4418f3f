//! Identity assertion (application service API, "Identity assertion"): a client-server
//! request sent with the appservice's `as_token` acts as any user of its namespace when
//! it carries `?user_id=@ghost:server`. [`As`] wraps any of ruma's client-server requests
//! so that matrix-sdk sends it so (matrix-sdk has no call for it): the wrapped request
//! is made into HTTP as ruma makes it, and ruma's own `AppserviceUserIdentity` adds the
//! query. The client that sends it is one whose session is the `as_token`
//! ([`login::appservice_client`](super::login::appservice_client)); no ghost logs in.

use bytes::BufMut;
use matrix_sdk::ruma::OwnedUserId;
use matrix_sdk::ruma::api::auth_scheme::AuthScheme;
use matrix_sdk::ruma::api::error::IntoHttpError;
use matrix_sdk::ruma::api::path_builder::PathBuilder;
use matrix_sdk::ruma::api::{AppserviceUserIdentity, Metadata, OutgoingRequest};

/// `request`, sent as `user`.
#[derive(Clone, Debug)]
pub struct As<R> {
    /// The request.
    pub request: R,
    /// Whom it is sent as.
    pub user: OwnedUserId,
}

impl<R> As<R> {
    /// `request` as `user`.
    pub fn new(user: OwnedUserId, request: R) -> Self {
        As { request, user }
    }
}

impl<R: Metadata> Metadata for As<R> {
    const METHOD: http::Method = R::METHOD;
    const RATE_LIMITED: bool = R::RATE_LIMITED;
    type Authentication = R::Authentication;
    type PathBuilder = R::PathBuilder;
    const PATH_BUILDER: Self::PathBuilder = R::PATH_BUILDER;
}

impl<R: OutgoingRequest> OutgoingRequest for As<R> {
    type EndpointError = R::EndpointError;
    type IncomingResponse = R::IncomingResponse;

    fn try_into_http_request<T: Default + BufMut + AsRef<[u8]>>(
        self,
        base_url: &str,
        authentication_input: <Self::Authentication as AuthScheme>::Input<'_>,
        path_builder_input: <Self::PathBuilder as PathBuilder>::Input<'_>,
    ) -> Result<http::Request<T>, IntoHttpError> {
        let mut request =
            self.request.try_into_http_request(base_url, authentication_input, path_builder_input)?;
        AppserviceUserIdentity::new(&self.user).maybe_add_to_uri(request.uri_mut())?;
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use matrix_sdk::ruma::api::auth_scheme::SendAccessToken;
    use matrix_sdk::ruma::api::client::profile::set_profile_field;
    use matrix_sdk::ruma::api::{MatrixVersion, SupportedVersions};
    use matrix_sdk::ruma::owned_user_id;
    use matrix_sdk::ruma::profile::ProfileFieldValue;

    use super::*;

    #[test]
    fn the_request_carries_the_ghosts_user_id_and_the_appservices_token() {
        let ghost = owned_user_id!("@irc_libera_bob:example.org");
        let name = ProfileFieldValue::DisplayName("bob (IRC)".into());
        let request = As::new(ghost.clone(), set_profile_field::v3::Request::new(ghost, name));
        let versions =
            SupportedVersions { versions: [MatrixVersion::V1_1].into(), features: Default::default() };
        let http: http::Request<Vec<u8>> = request
            .try_into_http_request(
                "https://hs.example.org",
                SendAccessToken::IfRequired("as-token"),
                std::borrow::Cow::Owned(versions),
            )
            .expect("a request");
        let uri = http.uri().to_string();
        assert!(uri.ends_with("?user_id=%40irc_libera_bob%3Aexample.org"), "{uri}");
        assert_eq!(http.headers()["authorization"], "Bearer as-token");
    }
}
