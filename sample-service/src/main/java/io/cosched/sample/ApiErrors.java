package io.cosched.sample;

import java.util.Map;
import java.util.TreeMap;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.bind.support.WebExchangeBindException;

/** The API's errors as problem details: validation (400 with the fields), unknown account (404), rejected deposit (422). */
@RestControllerAdvice
class ApiErrors {

    @ExceptionHandler
    ProblemDetail invalid(WebExchangeBindException e) {
        ProblemDetail p = ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, "invalid request");
        Map<String, String> fields = new TreeMap<>();
        e.getFieldErrors().forEach(f -> fields.put(f.getField(), f.getDefaultMessage()));
        p.setProperty("fields", fields);
        return p;
    }

    @ExceptionHandler
    ProblemDetail notFound(AccountService.AccountNotFoundException e) {
        return ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND, e.getMessage());
    }

    @ExceptionHandler
    ProblemDetail rejected(AccountService.DepositRejectedException e) {
        return ProblemDetail.forStatusAndDetail(HttpStatus.UNPROCESSABLE_CONTENT, e.getMessage());
    }
}
