package io.github.distlock.sample.web;

import io.github.distlock.sample.AbstractSampleIntegrationTests;
import io.github.distlock.sample.SampleHttp.Reply;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bad input gets a JSON problem body ({@code application/problem+json}) with a status and a
 * {@code code}: unknown order or SKU 404, a quantity that is not a number or is too small 400.
 */
class ApiErrorsIntegrationTests extends AbstractSampleIntegrationTests {

    @Test
    void unknownOrderIs404() {
        assertProblem(this.http.get("/orders/nope"), 404, "not-found", "No order with id 'nope'");
        assertProblem(this.http.post("/orders/nope/pay"), 404, "not-found", "No order with id 'nope'");
    }

    @Test
    void unknownSkuIs404() {
        assertProblem(this.http.get("/items/nope"), 404, "not-found", "No item with id 'nope'");
        assertProblem(this.http.post("/items/nope/buy"), 404, "not-found", "No item with id 'nope'");
    }

    @Test
    void quantityThatIsNotANumberIs400() {
        assertProblem(this.http.post("/items/sku-1/buy?quantity=abc"), 400, "invalid-quantity",
                "quantity must be a whole number, got 'abc'");
        assertProblem(this.http.post("/items/sku-1/buy?quantity=1.5"), 400, "invalid-quantity",
                "quantity must be a whole number, got '1.5'");
        assertProblem(this.http.put("/items/sku-1/stock?quantity=lots"), 400, "invalid-quantity",
                "quantity must be a whole number, got 'lots'");
    }

    @Test
    void negativeOrZeroQuantityIs400() {
        assertProblem(this.http.post("/items/sku-1/buy?quantity=-2"), 400, "invalid-quantity",
                "quantity must be at least 1, got -2");
        assertProblem(this.http.post("/items/sku-1/buy?quantity=0"), 400, "invalid-quantity",
                "quantity must be at least 1, got 0");
        assertProblem(this.http.put("/items/sku-1/stock?quantity=-1"), 400, "invalid-quantity",
                "quantity must be at least 0, got -1");
    }

    @Test
    void buyingMoreThanIsLeftIs409SoldOut() {
        this.http.put("/items/sku-2/stock?quantity=1");
        Reply reply = this.http.post("/items/sku-2/buy?quantity=2");
        assertProblem(reply, 409, "sold-out", "Cannot sell 2 of 'sku-2': 1 left");
        assertThat((int) reply.json("$.stockLeft")).isEqualTo(1);
    }

    private static void assertProblem(Reply reply, int status, String code, String detail) {
        assertThat(reply.status()).as(reply.toString()).isEqualTo(status);
        assertThat(reply.header("Content-Type")).isEqualTo("application/problem+json");
        assertThat((int) reply.json("$.status")).isEqualTo(status);
        assertThat((String) reply.json("$.code")).isEqualTo(code);
        assertThat((String) reply.json("$.detail")).isEqualTo(detail);
    }
}
